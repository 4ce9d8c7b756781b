// Package auth is the principal contract: who a request acts for (Principal), what it may do
// (Can, Require, the roles and permissions), and how the principal travels from the gateway
// to services, and between services, signed with the service credential (Signer). A service
// never trusts a principal header whose signature does not verify. It imports nothing but
// the standard library and apperr; package fiberauth adapts it to Fiber (credentials,
// middleware).
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
)

// Headers carrying the principal between Baton's own processes. The gateway removes any a
// client sends.
const (
	HeaderPrincipal = "X-Baton-Principal"
	HeaderSignature = "X-Baton-Signature"
	HeaderToken     = "X-Access-Token"
)

// Principal types.
const (
	TypeUser     = "user"
	TypeSession  = "session"
	TypeTeam     = "team"
	TypeWorkflow = "workflow"
	TypeGlobal   = "global"
	// TypeService is a Baton service acting on its own behalf (schedules firing runs).
	TypeService = "service"
	// TypeAnonymous is a caller without credentials on an open endpoint (activation, chat,
	// code-host deliveries verified by their signatures instead).
	TypeAnonymous = "anonymous"
	// TypeRun is a run's callback token (Signer.RunToken): its ID is the run's id, and it may
	// do nothing but answer that run's callbacks, which the runs service checks itself. Can
	// grants it nothing.
	TypeRun = "run"
)

// Anonymous is the principal the gateway forwards for open endpoints called without
// credentials, so services still know the request came through the gateway.
var Anonymous = Principal{Type: TypeAnonymous, ID: "anonymous"}

// Principal is who a request acts for, resolved once at the gateway.
type Principal struct {
	// Type is one of the Type constants.
	Type string `json:"type"`
	// ID identifies the principal: a user or token id, a team name, `<team>/<workflow>`.
	ID string `json:"id"`
	// Name is a display name for logs and `initiatedBy`.
	Name string `json:"name,omitempty"`
	// Email is set for users.
	Email string `json:"email,omitempty"`
	// Roles are the global roles held (`admin`, `operator`).
	Roles []string `json:"roles,omitempty"`
	// Permissions are `<resource>/<action>` grants of a token.
	Permissions []string `json:"permissions,omitempty"`
	// Teams maps the teams a user belongs to onto their role there.
	Teams map[string]string `json:"teams,omitempty"`
	// Team is the team of a team or workflow token.
	Team string `json:"team,omitempty"`
	// Workflow is the workflow of a workflow token.
	Workflow string `json:"workflow,omitempty"`
	// TokenID is the id of the token that authenticated the request, if any.
	TokenID string `json:"tokenId,omitempty"`
	// Person is the user answerable for what the principal does: the user itself for user
	// and session principals; for team, workflow and global tokens, the user at the root of
	// the chain of tokens that made the token (tokens are made by users or by other tokens).
	// Empty when no user is at the root (the bootstrap admin token, a service), so rules
	// about people, such as a run's initiator not approving their own run, hold whichever
	// credential a person uses.
	Person string `json:"person,omitempty"`
}

// IsAdmin reports whether the principal holds the global admin role. A run's callback
// token never does, whatever roles it claims.
func (p Principal) IsAdmin() bool {
	if p.Type == TypeRun {
		return false
	}
	for _, r := range p.Roles {
		if r == "admin" {
			return true
		}
	}
	return false
}

// Signer signs and verifies principal headers with the service key shared by Baton's
// processes, and mints and verifies runs' callback tokens (RunToken) with a key derived
// from it. It signs with the current key alone, and verifies with it and with the previous
// keys it was given, so keys can be rotated without refusing the run tokens already handed
// out or a process still signing with the key being replaced.
type Signer struct {
	key []byte
	// runKey signs run tokens. It is derived from key under its own label, so no run
	// token's MAC can ever pass for a principal signature or the other way round.
	runKey []byte
	// keys and runKeys verify: the current key's first, then the previous keys'.
	keys, runKeys [][]byte
}

// MinKeyLength is the shortest service key a Signer takes, in bytes.
const MinKeyLength = 16

// NewSigner returns a Signer that signs with key and verifies with key and previous, each
// at least MinKeyLength bytes.
func NewSigner(key []byte, previous ...[]byte) (*Signer, error) {
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("service key must be at least %d bytes, got %d", MinKeyLength, len(key))
	}
	key = append([]byte(nil), key...)
	s := &Signer{key: key, runKey: deriveKey(key, runTokenLabel)}
	s.keys, s.runKeys = [][]byte{s.key}, [][]byte{s.runKey}
	for i, k := range previous {
		if len(k) < MinKeyLength {
			return nil, fmt.Errorf("previous service key %d must be at least %d bytes, got %d", i+1, MinKeyLength, len(k))
		}
		k = append([]byte(nil), k...)
		s.keys = append(s.keys, k)
		s.runKeys = append(s.runKeys, deriveKey(k, runTokenLabel))
	}
	return s, nil
}

// deriveKey returns the key for one purpose of the service key: HMAC-SHA256 of the label.
func deriveKey(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// Encode returns the header values carrying p: the encoded principal and its signature.
func (s *Signer) Encode(p Principal) (principal, signature string, err error) {
	raw, err := json.Marshal(p)
	if err != nil {
		return "", "", fmt.Errorf("encode principal: %w", err)
	}
	principal = base64.RawURLEncoding.EncodeToString(raw)
	return principal, s.sign(principal), nil
}

func (s *Signer) sign(principal string) string { return signWith(s.key, principal) }

func signWith(key []byte, principal string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(principal))
	return hex.EncodeToString(m.Sum(nil))
}

// Decode verifies signature over principal, under the current key or a previous one, and
// returns the principal it carries.
func (s *Signer) Decode(principal, signature string) (Principal, error) {
	if principal == "" || signature == "" {
		return Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if !s.verifies(principal, signature) {
		return Principal{}, apperr.New(apperr.Unauthenticated, "The service credential is not valid.")
	}
	raw, err := base64.RawURLEncoding.DecodeString(principal)
	if err != nil {
		return Principal{}, apperr.Wrap(apperr.Unauthenticated, err, "The principal header is malformed.")
	}
	var p Principal
	if err := json.Unmarshal(raw, &p); err != nil {
		return Principal{}, apperr.Wrap(apperr.Unauthenticated, err, "The principal header is malformed.")
	}
	return p, nil
}

// verifies reports whether signature is principal's under one of the keys that verify.
func (s *Signer) verifies(principal, signature string) bool {
	for _, k := range s.keys {
		if hmac.Equal([]byte(signWith(k, principal)), []byte(signature)) {
			return true
		}
	}
	return false
}

// SetHeaders writes p into the headers of an outgoing request through set.
func (s *Signer) SetHeaders(p Principal, set func(key, value string)) error {
	principal, signature, err := s.Encode(p)
	if err != nil {
		return err
	}
	set(HeaderPrincipal, principal)
	set(HeaderSignature, signature)
	return nil
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal ctx carries.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
