package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/workflowid"
)

// TokenType says what a token acts as.
type TokenType string

// Token types (API.md §2).
const (
	// TokenGlobal acts instance-wide, by its permissions.
	TokenGlobal TokenType = "global"
	// TokenTeam acts inside one team, by its permissions.
	TokenTeam TokenType = "team"
	// TokenWorkflow acts inside one workflow of a team, by its permissions.
	TokenWorkflow TokenType = "workflow"
	// TokenUser acts as a user with the user's roles at the time of use, narrowed to its
	// permissions when it lists any.
	TokenUser TokenType = "user"
	// TokenSession is minted internally when a verified JWT signs in; never through the API.
	TokenSession TokenType = "session"
)

// TokenTypes lists every type, in the order a v4 client knows them.
var TokenTypes = []TokenType{TokenSession, TokenUser, TokenTeam, TokenWorkflow, TokenGlobal}

// Valid reports whether t is a known type.
func (t TokenType) Valid() bool { return slices.Contains(TokenTypes, t) }

// secretLetters is the letter after "bt" in a secret of each type, so a leaked secret says
// what it is (and secret scanners can match it) without a lookup.
var secretLetters = map[TokenType]byte{
	TokenGlobal: 'g', TokenTeam: 't', TokenWorkflow: 'w', TokenUser: 'u', TokenSession: 's',
}

// SecretBytes is the randomness in a secret.
const SecretBytes = 32

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// secretDigits is how many base62 digits hold SecretBytes bytes: 62^43 > 2^256.
const secretDigits = 43

// secretRE is the shape of every secret: "bt", the type letter, "_", 43 base62 digits.
var secretRE = regexp.MustCompile(`^bt[gtwus]_[0-9A-Za-z]{43}$`)

// NewSecret returns a new secret for a token of type t, reading its randomness from rnd
// (crypto/rand.Reader outside tests).
func NewSecret(t TokenType, rnd io.Reader) (string, error) {
	letter, ok := secretLetters[t]
	if !ok {
		return "", fmt.Errorf("new secret: unknown token type %q", t)
	}
	raw := make([]byte, SecretBytes)
	if _, err := io.ReadFull(rnd, raw); err != nil {
		return "", fmt.Errorf("new secret: read randomness: %w", err)
	}
	digits := make([]byte, secretDigits)
	n := new(big.Int).SetBytes(raw)
	base, mod := big.NewInt(62), new(big.Int)
	// Fixed width, most significant digit first, zero-padded: every secret is as long.
	for i := secretDigits - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		digits[i] = base62[mod.Int64()]
	}
	return "bt" + string(letter) + "_" + string(digits), nil
}

// SecretType returns the type a secret's prefix names; ok is false for anything not shaped
// like a Baton secret, which therefore needs no lookup to be refused.
func SecretType(secret string) (TokenType, bool) {
	if !secretRE.MatchString(secret) {
		return "", false
	}
	for t, l := range secretLetters {
		if secret[2] == l {
			return t, true
		}
	}
	return "", false
}

// HashSecret returns the hex SHA-256 of a secret: the only form in which it is stored. The
// secret carries 256 random bits, so a fast unsalted hash is enough: there is nothing to
// guess from a dictionary.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Token is a credential: its secret is shown once, at creation, and kept only as a hash.
type Token struct {
	// ID is the public id, a 24-hex ObjectId.
	ID string
	// Hash is HashSecret of the secret; the store finds tokens by it.
	Hash        string
	Type        TokenType
	Name        string
	Description string
	// Principal is what the token acts as: a team name, `<team>/<workflow>`, a user id;
	// empty for global tokens.
	Principal string
	// Team is the team of team and workflow tokens, TeamID that team's record id when the
	// token was made: a team deleted and created again under the same name is another team,
	// and the old team's tokens do not work in it.
	Team     string
	TeamID   string
	Workflow string
	// UserID is the user of user and session tokens.
	UserID         string
	Permissions    []string
	CreationDate   time.Time
	ExpirationDate *time.Time
	RevokedDate    *time.Time
	// CreatedBy names the creator as the API shows it: a user id, else a token id.
	CreatedBy string
	// Creator is the key the creator's later requests are matched by, to show it the
	// tokens it made; see the app's creatorKey.
	Creator string
	// CreatorUserID is the person at the root of the token's making: the user who made it,
	// or made the token that made it, and so on; empty when no person did (the bootstrap
	// admin, a service). The token works only while that user may sign in.
	CreatorUserID string
	// Ancestors are the hashes of the tokens this one was made with, the first one made
	// first and its parent last. The token works only while each of them does.
	Ancestors []string
	LastUsed  *time.Time
}

// CreatorUser returns the user at the root of the token's making, if a person made it.
// Tokens stored before the field existed name their user in Creator.
func (t Token) CreatorUser() string {
	if t.CreatorUserID != "" {
		return t.CreatorUserID
	}
	if id, ok := strings.CutPrefix(t.Creator, "user:"); ok && len(t.Ancestors) == 0 {
		return id
	}
	return ""
}

// MadeWith records that t is made with parent, a token the caller authenticated with: t
// inherits parent's ancestry and person, and expires no later than parent.
func (t *Token) MadeWith(parent Token) {
	t.Ancestors = append(slices.Clone(parent.Ancestors), parent.Hash)
	t.CreatorUserID = parent.CreatorUser()
	if parent.ExpirationDate != nil && (t.ExpirationDate == nil || t.ExpirationDate.After(*parent.ExpirationDate)) {
		exp := *parent.ExpirationDate
		t.ExpirationDate = &exp
	}
}

// Revoked reports whether the token was revoked.
func (t Token) Revoked() bool { return t.RevokedDate != nil }

// Expired reports whether the token has expired at now.
func (t Token) Expired(now time.Time) bool {
	return t.ExpirationDate != nil && !now.Before(*t.ExpirationDate)
}

// Valid reports whether the token may be used at now: neither revoked nor expired.
func (t Token) Valid(now time.Time) bool { return !t.Revoked() && !t.Expired(now) }

// Limits of token requests.
const (
	MaxTokenNameLength        = 128
	MaxTokenDescriptionLength = 1024
	MaxTokenPermissions       = 100
)

// TokenRequest is what a caller asks for when creating a token.
type TokenRequest struct {
	Type           TokenType
	Name           string
	Principal      string
	Description    string
	ExpirationDate *time.Time
	Permissions    []string
}

// objectIDRE is the shape of the ids Baton gives users and tokens.
var objectIDRE = regexp.MustCompile(`^[0-9a-f]{24}$`)

// IsObjectID reports whether s is a 24-hex ObjectId string as Baton writes them.
func IsObjectID(s string) bool { return objectIDRE.MatchString(s) }

// NewToken validates r and returns the token it describes, without its secret, hash, ids
// or creator, which the caller fills. Permissions are trimmed and de-duplicated here;
// whether each names a known resource and action, and whether the caller may grant it, is
// the app's to check. A user token without a principal is refused here: the app fills in
// the caller first when it can.
func NewToken(r TokenRequest, now time.Time) (Token, error) {
	if r.Type == TokenSession {
		return Token{}, apperr.Invalid(apperr.TokenInvalidSessionReq,
			"Session tokens are minted when a user signs in and cannot be created through the API.",
			apperr.FieldError{Field: "type", Message: "session tokens cannot be requested"})
	}
	if !r.Type.Valid() {
		return Token{}, invalidToken("type", "The token type must be one of global, team, workflow or user, got '%s'.", r.Type)
	}
	t := Token{
		Type:         r.Type,
		Name:         strings.TrimSpace(r.Name),
		Description:  strings.TrimSpace(r.Description),
		CreationDate: now,
	}
	if len(t.Name) > MaxTokenNameLength {
		return Token{}, invalidToken("name", "The token name must be at most %d characters.", MaxTokenNameLength)
	}
	if len(t.Description) > MaxTokenDescriptionLength {
		return Token{}, invalidToken("description", "The token description must be at most %d characters.", MaxTokenDescriptionLength)
	}
	if r.ExpirationDate != nil {
		exp := r.ExpirationDate.UTC().Truncate(time.Millisecond)
		if !exp.After(now) {
			return Token{}, invalidToken("expirationDate", "The expiration date must be in the future.")
		}
		t.ExpirationDate = &exp
	}

	principal := strings.TrimSpace(r.Principal)
	switch r.Type {
	case TokenGlobal:
		// A global token acts for nobody in particular; v4 clients send their own name here.
	case TokenTeam:
		if principal == "" || Slug(principal) != principal {
			return Token{}, invalidToken("principal", "A team token's principal must be a team name, got '%s'.", principal)
		}
		t.Principal, t.Team = principal, principal
	case TokenWorkflow:
		if team, workflow, ok := workflowid.Parse(principal); ok && team != "" {
			principal = team + "/" + workflow // v4 clients name the workflow by its id
		}
		team, workflow, ok := strings.Cut(principal, "/")
		if !ok || team == "" || workflow == "" || Slug(team) != team || Slug(workflow) != workflow {
			return Token{}, invalidToken("principal", "A workflow token's principal must be '<team>/<workflow>', got '%s'.", principal)
		}
		t.Principal, t.Team, t.Workflow = principal, team, workflow
	case TokenUser:
		principal = strings.ToLower(principal)
		if !IsObjectID(principal) {
			return Token{}, invalidToken("principal", "A user token's principal must be a user id, got '%s'.", principal)
		}
		t.Principal, t.UserID = principal, principal
	}

	seen := map[string]bool{}
	for _, p := range r.Permissions {
		p = strings.TrimSpace(p)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		t.Permissions = append(t.Permissions, p)
	}
	if len(t.Permissions) > MaxTokenPermissions {
		return Token{}, invalidToken("permissions", "A token may list at most %d permissions.", MaxTokenPermissions)
	}
	// A user token without permissions acts with all of its user's rights; any other token
	// without them could do nothing at all, which is a mistake worth reporting.
	if len(t.Permissions) == 0 && r.Type != TokenUser {
		return Token{}, invalidToken("permissions", "A %s token needs at least one permission, such as 'workflow/read'.", r.Type)
	}
	return t, nil
}

func invalidToken(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return apperr.Invalid(apperr.TokenInvalidReq, msg, apperr.FieldError{Field: field, Message: msg})
}

// ErrTokenNotFound matches every token-not-found error with errors.Is.
var ErrTokenNotFound = apperr.New(apperr.TokenNotFound, "Token was not found.")

// TokenNotFound is the error for a token id that does not exist or is not the caller's to see.
func TokenNotFound(id string) error {
	return apperr.New(apperr.TokenNotFound, "Token '%s' was not found.", id)
}

// TokenAudience says which tokens a caller may see: an empty audience sees none.
type TokenAudience struct {
	// All sees every token (admins).
	All bool
	// Creator sees the tokens made by the caller with this creator key.
	Creator string
	// UserID sees the user's own user and session tokens.
	UserID string
	// Teams sees the team and workflow tokens of these teams (the ones the caller owns).
	Teams []string
}

// Sees reports whether the audience may see t.
func (a TokenAudience) Sees(t Token) bool {
	switch {
	case a.All:
		return true
	case a.Creator != "" && t.Creator == a.Creator:
		return true
	case a.UserID != "" && t.UserID == a.UserID:
		return true
	case t.Team != "" && slices.Contains(a.Teams, t.Team):
		return true
	}
	return false
}

// TokenFilter selects tokens in a search; empty fields do not filter.
type TokenFilter struct {
	Audience   TokenAudience
	Types      []TokenType
	Principals []string
	// From and To bound creationDate, both inclusive.
	From, To *time.Time
}

// TokenSortFields are the fields a token search may sort by.
var TokenSortFields = []string{"creationDate", "name"}
