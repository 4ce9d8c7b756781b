package auth_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

const runID = "01936f4c-8a2b-7c3d-9e4f-5a6b7c8d9e0f"

func newRunSigner(t *testing.T, key string) *auth.Signer {
	t.Helper()
	s, err := auth.NewSigner([]byte(key))
	require.NoError(t, err)
	return s
}

func TestRunTokenRoundTrip(t *testing.T) {
	t.Parallel()
	s := newRunSigner(t, "0123456789abcdef0123")
	tests := []struct {
		name  string
		runID string
	}{
		{"a run id", runID},
		{"a dotted id", "team.run.7"},
		{"one character", "r"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			token := s.RunToken(tt.runID)
			require.True(t, strings.HasPrefix(token, "btr_"+tt.runID+"."), token)
			mac := token[strings.LastIndexByte(token, '.')+1:]
			assert.Len(t, mac, 43, "32 bytes of unpadded base64url")
			assert.NotContains(t, mac, "=")
			assert.Equal(t, token, s.RunToken(tt.runID), "deterministic")

			got, ok := s.VerifyRunToken(token)
			require.True(t, ok)
			assert.Equal(t, tt.runID, got)
		})
	}
}

func TestRunTokenRefusals(t *testing.T) {
	t.Parallel()
	s := newRunSigner(t, "0123456789abcdef0123")
	other := newRunSigner(t, "another-key-0123456789")
	good := s.RunToken(runID)
	mac := good[strings.LastIndexByte(good, '.')+1:]
	// What the service key itself (not the derived one) makes of the run id: a token must
	// not verify with the key principal signatures use.
	plain := hmac.New(sha256.New, []byte("0123456789abcdef0123"))
	plain.Write([]byte(runID))
	underServiceKey := "btr_" + runID + "." + base64.RawURLEncoding.EncodeToString(plain.Sum(nil))
	flipped := []byte(good)
	flipped[len(flipped)-2] ^= 1

	tests := []struct {
		name string
		give string
	}{
		{"empty", ""},
		{"the prefix alone", "btr_"},
		{"no MAC", "btr_" + runID},
		{"an empty MAC", "btr_" + runID + "."},
		{"an empty run id", "btr_." + mac},
		{"another run's MAC", "btr_other-run." + mac},
		{"another prefix", "btu_" + runID + "." + mac},
		{"no prefix", runID + "." + mac},
		{"upper-case prefix", "BTR_" + runID + "." + mac},
		{"signed with another key", other.RunToken(runID)},
		{"signed with the service key itself", underServiceKey},
		{"a changed MAC", string(flipped)},
		{"a padded MAC", good + "="},
		{"a short MAC", good[:len(good)-1]},
		{"a NUL in the run id", "btr_run\x00id." + mac},
		{"a NUL after the MAC", good + "\x00"},
		{"a space in the run id", "btr_run id." + mac},
		{"over-long", "btr_" + strings.Repeat("r", auth.MaxRunTokenLength) + "." + mac},
		{"a JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := s.VerifyRunToken(tt.give)
			assert.False(t, ok)
			assert.Empty(t, got)
		})
	}
}

func TestRunTokenOfAnIDNoTokenCanCarry(t *testing.T) {
	t.Parallel()
	s := newRunSigner(t, "0123456789abcdef0123")
	longest := strings.Repeat("r", auth.MaxRunTokenLength-len("btr_.")-43)
	tests := []struct {
		name string
		give string
		want bool
	}{
		{"empty", "", false},
		{"a NUL", "run\x00", false},
		{"a newline", "run\n", false},
		{"the longest id", longest, true},
		{"one byte longer", longest + "r", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			token := s.RunToken(tt.give)
			if !tt.want {
				assert.Empty(t, token)
				return
			}
			assert.Len(t, token, auth.MaxRunTokenLength)
			got, ok := s.VerifyRunToken(token)
			require.True(t, ok)
			assert.Equal(t, tt.give, got)
		})
	}
}
