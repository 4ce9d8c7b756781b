// Package secrets seals the secrets Baton keeps in its databases — password parameters,
// secured settings, integration credentials — with AES-256-GCM under a key from
// configuration (BATON_SECRET_KEY), and masks them in everything it shows.
//
// A sealed value is a self-describing string, `enc:v1:<base64url(nonce | ciphertext+tag)>`,
// so stored data says how to open it, and a later format can be told apart from this one.
// The version prefix is authenticated too: relabelling a value fails to open it.
package secrets

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvKey is the variable holding the key: 32 bytes, hex- or base64-encoded.
const EnvKey = "BATON_SECRET_KEY"

// Mask stands in for a secret in every response, log line and event. Clients sending it
// back in a write mean "keep the stored secret".
const Mask = "********"

// KeySize is the key length in bytes (AES-256).
const KeySize = 32

// prefix marks a value sealed in format v1.
const prefix = "enc:v1:"

var (
	// ErrInvalidKey means a configured key is not 32 bytes in hex or base64.
	ErrInvalidKey = errors.New("secret key must be 32 bytes, hex- or base64-encoded")
	// ErrNotSealed means a value is not in a sealed format this package knows.
	ErrNotSealed = errors.New("value is not sealed")
	// ErrOpen means a sealed value did not authenticate: another key sealed it, or it was
	// changed since.
	ErrOpen = errors.New("sealed value cannot be opened: wrong key or altered value")
)

// Box seals and opens values with one key. It is safe for concurrent use.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a raw 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: got %d bytes", ErrInvalidKey, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return &Box{aead: aead}, nil
}

// FromString returns a Box for a configured key (see ParseKey).
func FromString(s string) (*Box, error) {
	key, err := ParseKey(s)
	if err != nil {
		return nil, err
	}
	return New(key)
}

// ParseKey decodes a configured key: 64 hex digits, or base64 (standard or URL alphabet,
// padded or not) of 32 bytes. Surrounding blanks are ignored.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, ErrInvalidKey
}

// GenerateKey returns a fresh random key, hex-encoded.
func GenerateKey() (string, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("generate secret key: %w", err)
	}
	return hex.EncodeToString(key), nil
}

// Seal encrypts plain with a fresh random nonce, so sealing the same value twice gives
// different strings.
func (b *Box) Seal(plain string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("seal: %w", err)
	}
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(prefix))
	return prefix + base64.RawURLEncoding.EncodeToString(out), nil
}

// Open decrypts a value Seal returned. It fails with ErrNotSealed for anything else and
// with ErrOpen when the value does not authenticate under this key.
func (b *Box) Open(sealed string) (string, error) {
	payload, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", ErrNotSealed
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return "", ErrOpen
	}
	n := b.aead.NonceSize()
	plain, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(prefix))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// IsSealed reports whether s is in a sealed format (whether or not it would open).
func IsSealed(s string) bool { return strings.HasPrefix(s, prefix) }

// LoadOrCreateKey returns the key kept in the file at path, creating the file with a new
// key (mode 0600, directories 0700) when it does not exist: standalone mode's key, so a
// restart can open what earlier runs sealed. A file that exists but holds no valid key is
// an error, never replaced, since replacing it would lose every secret sealed with it.
func LoadOrCreateKey(path string) (string, error) {
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	fresh, err := GenerateKey()
	if err != nil {
		return "", err
	}
	tmp, err := writeTemp(path, fresh)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	// Link fails if the file appeared meanwhile, so two starts racing keep one key.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("keep secret key: %w", err)
	}
	return readKey(path)
}

func readKey(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read secret key: %w", err)
	}
	key := strings.TrimSpace(string(raw))
	if _, err := ParseKey(key); err != nil {
		return "", fmt.Errorf("secret key file %s: %w", path, err)
	}
	return key, nil
}

// WriteFile writes a secret value to path readable only by this user (0600, directories
// created 0700), replacing the file as a whole so a reader never sees half of it.
func WriteFile(path, value string) error {
	tmp, err := writeTemp(path, value)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeTemp writes value and a newline to a new 0600 file next to path.
func writeTemp(path, value string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	_, werr := f.WriteString(value + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("write %s: %w", path, werr)
	}
	return f.Name(), nil
}

// KeyFromEnv reads the key from EnvKey in getenv: required, and well formed. what says
// what the service seals with it, for the error that names the variable.
func KeyFromEnv(getenv func(string) string, what string) (string, error) {
	key := getenv(EnvKey)
	if key == "" {
		return "", fmt.Errorf("%s is required: the key that seals %s at rest "+
			"(32 bytes, hex or base64, e.g. `openssl rand -hex 32`), the same for every service", EnvKey, what)
	}
	if _, err := ParseKey(key); err != nil {
		return "", fmt.Errorf("%s: %w", EnvKey, err)
	}
	return key, nil
}

// HoldsSealed reports whether b, a JSON document say, may hold a sealed value: one search,
// so that a document holding none is used as it is.
func HoldsSealed(b []byte) bool { return bytes.Contains(b, []byte(prefix)) }
