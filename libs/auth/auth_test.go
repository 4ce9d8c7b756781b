package auth_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
)

func TestSignerRoundTripAndTampering(t *testing.T) {
	t.Parallel()
	s, err := auth.NewSigner([]byte("0123456789abcdef0123"))
	require.NoError(t, err)
	other, err := auth.NewSigner([]byte("another-key-0123456789"))
	require.NoError(t, err)
	_, err = auth.NewSigner([]byte("short"))
	require.Error(t, err)

	p := auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{"admin"}}
	enc, sig, err := s.Encode(p)
	require.NoError(t, err)

	got, err := s.Decode(enc, sig)
	require.NoError(t, err)
	assert.Equal(t, p, got)
	assert.True(t, got.IsAdmin())

	forged, _, err := s.Encode(auth.Principal{Type: auth.TypeGlobal, ID: "mallory", Roles: []string{"admin"}})
	require.NoError(t, err)
	tests := []struct {
		name           string
		principal, sig string
	}{
		{"missing", "", ""},
		{"swapped principal", forged, sig},
		{"signed with another key", enc, func() string { _, s2, _ := other.Encode(p); return s2 }()},
		{"garbage", "%%%", sig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := s.Decode(tt.principal, tt.sig)
			require.Error(t, err)
			assert.Equal(t, apperr.KindUnauthenticated, apperr.KindOf(err))
		})
	}
}

// The person behind a principal travels with it in the signed headers.
func TestPersonTravelsSigned(t *testing.T) {
	t.Parallel()
	s, err := auth.NewSigner([]byte("0123456789abcdef0123"))
	require.NoError(t, err)
	p := auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t1", Person: "u1"}
	enc, sig, err := s.Encode(p)
	require.NoError(t, err)
	got, err := s.Decode(enc, sig)
	require.NoError(t, err)
	assert.Equal(t, p, got)
}
