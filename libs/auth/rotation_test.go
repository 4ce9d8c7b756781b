package auth_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// A rotated key keeps verifying what it signed while it is listed among the previous keys,
// run tokens and principal signatures alike, and stops once it is not; a Signer always
// signs with its current key.
func TestPreviousKeysVerifyOnly(t *testing.T) {
	t.Parallel()
	const (
		oldKey   = "old-service-key-0123456789abcdef"
		newKey   = "new-service-key-0123456789abcdef"
		otherKey = "other-service-key-0123456789abcd"
	)
	old := newRunSigner(t, oldKey)
	token := old.RunToken(runID)
	principal, signature, err := old.Encode(auth.Principal{Type: auth.TypeService, ID: "schedules"})
	require.NoError(t, err)

	tests := []struct {
		name     string
		previous []string
		accepted bool
	}{
		{"old key listed", []string{oldKey}, true},
		{"old key listed after another", []string{otherKey, oldKey}, true},
		{"old key not listed", nil, false},
		{"another key listed", []string{otherKey}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var previous [][]byte
			for _, k := range tt.previous {
				previous = append(previous, []byte(k))
			}
			s, err := auth.NewSigner([]byte(newKey), previous...)
			require.NoError(t, err)

			got, ok := s.VerifyRunToken(token)
			assert.Equal(t, tt.accepted, ok, "the run token signed with the old key")
			if tt.accepted {
				assert.Equal(t, runID, got)
			}
			p, err := s.Decode(principal, signature)
			if tt.accepted {
				require.NoError(t, err, "the principal signed with the old key")
				assert.Equal(t, "schedules", p.ID)
			} else {
				assert.Error(t, err, "the principal signed with the old key")
			}

			// What s signs is the new key's: the old key alone does not verify it.
			fresh := s.RunToken(runID)
			assert.NotEqual(t, token, fresh)
			_, ok = old.VerifyRunToken(fresh)
			assert.False(t, ok, "a token s mints is not the old key's")
			_, ok = newRunSigner(t, newKey).VerifyRunToken(fresh)
			assert.True(t, ok, "a token s mints is the new key's")
			pr, sig, err := s.Encode(auth.Principal{Type: auth.TypeService, ID: "runs"})
			require.NoError(t, err)
			_, err = old.Decode(pr, sig)
			assert.Error(t, err, "a principal s signs is not the old key's")
		})
	}
}

func TestPreviousKeysMustBeLongEnough(t *testing.T) {
	t.Parallel()
	_, err := auth.NewSigner([]byte("new-service-key-0123456789abcdef"), []byte("short"))
	assert.ErrorContains(t, err, "previous service key 1")
}
