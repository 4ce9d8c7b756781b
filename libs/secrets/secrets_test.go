package secrets_test

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
)

func newBox(t *testing.T) *secrets.Box {
	t.Helper()
	key, err := secrets.GenerateKey()
	require.NoError(t, err)
	box, err := secrets.FromString(key)
	require.NoError(t, err)
	return box
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	box := newBox(t)
	tests := []struct{ name, give string }{
		{"empty", ""},
		{"password", "hunter2"},
		{"unicode", "pässwörd ✓ 秘密"},
		{"the mask itself", secrets.Mask},
		{"looks sealed", "enc:v1:AAAA"},
		{"pem key", "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("MIIEv", 400) + "\n-----END PRIVATE KEY-----\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sealed, err := box.Seal(tt.give)
			require.NoError(t, err)
			assert.True(t, secrets.IsSealed(sealed))
			assert.True(t, strings.HasPrefix(sealed, "enc:v1:"))
			if tt.give != "" {
				assert.NotContains(t, sealed, tt.give)
			}
			got, err := box.Open(sealed)
			require.NoError(t, err)
			assert.Equal(t, tt.give, got)
		})
	}
}

func TestSealUsesAFreshNonce(t *testing.T) {
	t.Parallel()
	box := newBox(t)
	a, err := box.Seal("same")
	require.NoError(t, err)
	b, err := box.Seal("same")
	require.NoError(t, err)
	assert.NotEqual(t, a, b)
}

func TestOpenDetectsTampering(t *testing.T) {
	t.Parallel()
	box := newBox(t)
	sealed, err := box.Seal("top secret")
	require.NoError(t, err)
	payload := strings.TrimPrefix(sealed, "enc:v1:")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	require.NoError(t, err)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		return "enc:v1:" + base64.RawURLEncoding.EncodeToString(b)
	}

	tests := []struct {
		name    string
		give    string
		wantErr error
	}{
		{"nonce changed", flip(0), secrets.ErrOpen},
		{"ciphertext changed", flip(14), secrets.ErrOpen},
		{"tag changed", flip(len(raw) - 1), secrets.ErrOpen},
		{"truncated", "enc:v1:" + base64.RawURLEncoding.EncodeToString(raw[:len(raw)-3]), secrets.ErrOpen},
		{"too short", "enc:v1:AAAA", secrets.ErrOpen},
		{"not base64", "enc:v1:***", secrets.ErrOpen},
		{"relabelled version", "enc:v2:" + payload, secrets.ErrNotSealed},
		{"plain text", "top secret", secrets.ErrNotSealed},
		{"the mask", secrets.Mask, secrets.ErrNotSealed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := box.Open(tt.give)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Empty(t, got)
		})
	}
}

func TestOpenWithTheWrongKeyFails(t *testing.T) {
	t.Parallel()
	sealed, err := newBox(t).Seal("top secret")
	require.NoError(t, err)
	_, err = newBox(t).Open(sealed)
	assert.ErrorIs(t, err, secrets.ErrOpen)
	assert.NotContains(t, err.Error(), "top secret")
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	tests := []struct {
		name    string
		give    string
		wantErr bool
	}{
		{"hex", hex.EncodeToString(key), false},
		{"hex upper case with blanks", "  " + strings.ToUpper(hex.EncodeToString(key)) + "\n", false},
		{"base64", base64.StdEncoding.EncodeToString(key), false},
		{"base64 unpadded", base64.RawStdEncoding.EncodeToString(key), false},
		{"base64url", base64.URLEncoding.EncodeToString(key), false},
		{"empty", "", true},
		{"short hex", hex.EncodeToString(key[:16]), true},
		{"long base64", base64.StdEncoding.EncodeToString(append(key, 1)), true},
		{"passphrase", "correct horse battery staple", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := secrets.ParseKey(tt.give)
			if tt.wantErr {
				assert.ErrorIs(t, err, secrets.ErrInvalidKey)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, key, got)
		})
	}
	_, err := secrets.New(key[:31])
	assert.ErrorIs(t, err, secrets.ErrInvalidKey)
}

func TestIsSealed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give string
		want bool
	}{
		{"enc:v1:abc", true},
		{"enc:v2:abc", false},
		{"", false},
		{secrets.Mask, false},
		{"ENC:V1:abc", false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, secrets.IsSealed(tt.give), tt.give)
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "nested", "secret-key")

	first, err := secrets.LoadOrCreateKey(path)
	require.NoError(t, err)
	_, err = secrets.ParseKey(first)
	require.NoError(t, err)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	again, err := secrets.LoadOrCreateKey(path)
	require.NoError(t, err)
	assert.Equal(t, first, again, "a restart keeps the key")

	// What one start sealed, the next opens.
	a, err := secrets.FromString(first)
	require.NoError(t, err)
	b, err := secrets.FromString(again)
	require.NoError(t, err)
	sealed, err := a.Seal("kept")
	require.NoError(t, err)
	got, err := b.Open(sealed)
	require.NoError(t, err)
	assert.Equal(t, "kept", got)

	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary files are left behind")
}

func TestLoadOrCreateKeyRacesKeepOneKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret-key")
	keys := make([]string, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := secrets.LoadOrCreateKey(path)
			assert.NoError(t, err)
			keys[i] = k
		}()
	}
	wg.Wait()
	for _, k := range keys {
		assert.Equal(t, keys[0], k)
	}
}

func TestLoadOrCreateKeyNeverReplacesABadFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret-key")
	require.NoError(t, os.WriteFile(path, []byte("not a key\n"), 0o600))
	_, err := secrets.LoadOrCreateKey(path)
	require.ErrorIs(t, err, secrets.ErrInvalidKey)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "not a key\n", string(raw))
}

func TestWriteFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dir", "activation-code")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))

	require.NoError(t, secrets.WriteFile(path, "new-code"))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new-code\n", string(raw))
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}
