package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TokenStore keeps tokens, found by the hash of their secret (the store's primary key, so
// authentication is one indexed lookup) or by their public id.
type TokenStore interface {
	// CreateToken stores a new token.
	CreateToken(ctx context.Context, t domain.Token) error
	// FindTokenByHash fails with domain.ErrTokenNotFound.
	FindTokenByHash(ctx context.Context, hash string) (domain.Token, error)
	// FindTokenByID fails with domain.ErrTokenNotFound.
	FindTokenByID(ctx context.Context, id string) (domain.Token, error)
	// FindTokensByHashes returns those of the tokens with these hashes that exist.
	FindTokensByHashes(ctx context.Context, hashes []string) ([]domain.Token, error)
	// FindTokens returns one page of the tokens f selects and how many it selects in all.
	FindTokens(ctx context.Context, f domain.TokenFilter, p page.Request) ([]domain.Token, int64, error)
	// RevokeToken marks the token revoked at at, unless it already is, and every live token
	// that lists it among its ancestors; it returns the token.
	RevokeToken(ctx context.Context, id string, at time.Time) (domain.Token, error)
	// RevokeUserTokens marks every live token of the user revoked at at: the user and
	// session tokens acting as them and the tokens they made (CreatorUser).
	RevokeUserTokens(ctx context.Context, userID string, at time.Time) error
	// TouchToken records that the token was used at at.
	TouchToken(ctx context.Context, hash string, at time.Time) error
}

// TokenTeams tells the token use cases about teams.
type TokenTeams interface {
	// TeamID returns the record id of the live team called name, or TEAM_NOT_FOUND.
	TeamID(ctx context.Context, name string) (string, error)
	// TeamLive reports whether the team with record id is live and still called name.
	TeamLive(ctx context.Context, id, name string) (bool, error)
}

// UserPrincipals resolves a user to the principal they act as now: their global roles and
// team roles. It fails with USER_NOT_FOUND for users who do not exist or may not sign in.
type UserPrincipals interface {
	ForUser(ctx context.Context, userID string) (auth.Principal, error)
}

// tokenTouchEvery bounds how often a token's lastUsed is written: authentication stays one
// read for a token in steady use (the gateway caches answers for seconds anyway).
const tokenTouchEvery = time.Minute

// Tokens is the token use cases: create, search, revoke, and authenticate a secret.
type Tokens struct {
	store TokenStore
	teams TokenTeams
	users UserPrincipals
	newID func() string
	now   func() time.Time
	rand  io.Reader
}

// NewTokens returns the token use cases. users may be nil while no user store exists: user
// tokens then act as a user without roles, which may do nothing.
func NewTokens(store TokenStore, teams TokenTeams, users UserPrincipals, newID func() string) *Tokens {
	return &Tokens{store: store, teams: teams, users: users, newID: newID, now: time.Now, rand: rand.Reader}
}

// CreatedToken is a new token and its secret, which is never available again.
type CreatedToken struct {
	Token  domain.Token
	Secret string
}

// CreateToken makes a token for caller. Nobody mints a token with more rights than they
// hold: every permission requested must be one caller has in the token's scope (403
// TOKEN_INVALID_PERMISSION otherwise), and making team and workflow tokens needs
// token/write there. Nor does a token outlive what made it: one made with a token expires
// no later than that token and stops working when it does (see Authenticate).
func (s *Tokens) CreateToken(ctx context.Context, caller auth.Principal, r domain.TokenRequest) (CreatedToken, error) {
	if !tokenCallerKnown(caller) {
		return CreatedToken{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if r.Type == domain.TokenUser && strings.TrimSpace(r.Principal) == "" && tokenActsAsUser(caller) {
		r.Principal = caller.ID
	}
	t, err := domain.NewToken(r, s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return CreatedToken{}, err
	}
	if err := tokenPermissionsValid(t.Permissions); err != nil {
		return CreatedToken{}, err
	}
	// Authorization comes before any lookup, so callers learn nothing about teams and users
	// they may not mint tokens for.
	if err := mayMintToken(caller, t); err != nil {
		return CreatedToken{}, err
	}
	if err := s.resolvePrincipal(ctx, &t); err != nil {
		return CreatedToken{}, err
	}
	if err := s.recordLineage(ctx, caller, &t); err != nil {
		return CreatedToken{}, err
	}

	secret, err := domain.NewSecret(t.Type, s.rand)
	if err != nil {
		return CreatedToken{}, err
	}
	t.ID = s.newID()
	t.Hash = domain.HashSecret(secret)
	t.CreatedBy = tokenCreatedBy(caller)
	t.Creator = tokenCreatorKey(caller)
	if err := s.store.CreateToken(ctx, t); err != nil {
		return CreatedToken{}, err
	}
	return CreatedToken{Token: t, Secret: secret}, nil
}

// recordLineage records what t's life hangs on. A token made with a token (any but a
// session's, which stands for the person signed in) inherits its ancestry and expires no
// later than it; a token made by a person, signed in or through a user token acting as
// them, records them, since it works only while they may sign in and acts only within what
// they hold.
func (s *Tokens) recordLineage(ctx context.Context, caller auth.Principal, t *domain.Token) error {
	if caller.TokenID != "" && caller.Type != auth.TypeSession {
		parent, err := s.store.FindTokenByID(ctx, caller.TokenID)
		if apperr.HasReason(err, apperr.TokenNotFound) {
			return errTokenNotAccepted
		}
		if err != nil {
			return err
		}
		if !parent.Valid(s.now()) {
			return errTokenNotAccepted
		}
		t.MadeWith(parent)
	}
	if tokenActsAsUser(caller) {
		t.CreatorUserID = caller.ID
	}
	return nil
}

// tokenPermissionsValid checks that each permission names a known resource and action.
func tokenPermissionsValid(perms []string) error {
	var bad []apperr.FieldError
	for i, p := range perms {
		if !auth.ValidPermission(p) {
			bad = append(bad, apperr.FieldError{Field: fmt.Sprintf("permissions[%d]", i),
				Message: fmt.Sprintf("'%s' is not <resource>/<action> with a known resource and action", p)})
		}
	}
	if len(bad) > 0 {
		return apperr.Invalid(apperr.TokenInvalidReq, "The token's permissions are not valid.", bad...)
	}
	return nil
}

// resolvePrincipal checks that what t acts as exists, and records its team's record id.
func (s *Tokens) resolvePrincipal(ctx context.Context, t *domain.Token) error {
	switch t.Type {
	case domain.TokenTeam, domain.TokenWorkflow:
		id, err := s.teams.TeamID(ctx, t.Team)
		if err != nil {
			return err
		}
		t.TeamID = id
	case domain.TokenUser:
		if s.users == nil {
			return nil
		}
		_, err := s.users.ForUser(ctx, t.UserID)
		if apperr.HasReason(err, apperr.Unauthenticated) {
			// The user exists but may not sign in (inactive): the request is at fault, not
			// the caller's credentials.
			return apperr.Invalid(apperr.TokenInvalidReq,
				fmt.Sprintf("User '%s' cannot sign in, so no token can act as them.", t.UserID),
				apperr.FieldError{Field: "principal", Message: "user cannot sign in"})
		}
		return err
	}
	return nil
}

// mayMintToken checks that caller may make t.
func mayMintToken(caller auth.Principal, t domain.Token) error {
	if t.Type == domain.TokenUser {
		return mayMintUserToken(caller, t)
	}
	scope := tokenScope(t)
	if !caller.Can(scope, "token", "write") {
		return apperr.New(apperr.PermissionDenied, "Not allowed to create tokens in %s.", describeTokenScope(scope))
	}
	for _, p := range t.Permissions {
		if !tokenCovered(p, func(res, act string) bool { return caller.Can(scope, res, act) }) {
			return apperr.Invalid(apperr.TokenInvalidPermission,
				fmt.Sprintf("The permission '%s' is more than the caller holds in %s.", p, describeTokenScope(scope)),
				apperr.FieldError{Field: "permissions", Message: p + " exceeds the caller's rights"})
		}
	}
	return nil
}

// mayMintUserToken: a user token acts as its user with that user's roles at the time of
// use, so it never holds more than its user. Users make them for themselves, admins for
// anyone. A caller that is itself a narrowed user token (an admin's too) may only pass on
// what it holds, or a token without permissions would widen it back to the whole user.
func mayMintUserToken(caller auth.Principal, t domain.Token) error {
	self := tokenActsAsUser(caller) && caller.ID == t.UserID
	if !self && !caller.IsAdmin() {
		return apperr.Invalid(apperr.TokenInvalidPermission, "Only admins may create tokens for another user.",
			apperr.FieldError{Field: "principal", Message: "not the caller"})
	}
	if !tokenNarrowed(caller) {
		return nil
	}
	if len(t.Permissions) == 0 {
		return apperr.Invalid(apperr.TokenInvalidPermission,
			"A token made with a narrowed token must list permissions within the caller's.",
			apperr.FieldError{Field: "permissions", Message: "required"})
	}
	for _, p := range t.Permissions {
		if !tokenCovered(p, func(res, act string) bool { return tokenGrantsAny(caller.Permissions, res, act) }) {
			return apperr.Invalid(apperr.TokenInvalidPermission,
				fmt.Sprintf("The permission '%s' is more than the caller's token holds.", p),
				apperr.FieldError{Field: "permissions", Message: p + " exceeds the caller's rights"})
		}
	}
	return nil
}

// tokenNarrowed reports whether p is a user token limited to its permissions, which
// auth.Can applies before any role the user holds.
func tokenNarrowed(p auth.Principal) bool {
	return p.Type == auth.TypeUser && p.TokenID != "" && len(p.Permissions) > 0
}

// tokenCovered reports whether allowed holds for every resource and action permission p
// names, wildcards expanded: `**/read` needs read on every resource.
func tokenCovered(p string, allowed func(resource, action string) bool) bool {
	for _, ra := range expandPermission(p) {
		if !allowed(ra[0], ra[1]) {
			return false
		}
	}
	return true
}

// expandPermission lists the resource and action pairs permission p names.
func expandPermission(p string) [][2]string {
	res, act, _ := strings.Cut(p, "/")
	resources, actions := []string{res}, []string{act}
	if res == auth.Wildcard {
		resources = auth.Resources
	}
	if act == auth.Wildcard {
		actions = auth.Actions
	}
	out := make([][2]string, 0, len(resources)*len(actions))
	for _, r := range resources {
		for _, a := range actions {
			out = append(out, [2]string{r, a})
		}
	}
	return out
}

// tokenPermissionsWithin returns the part of perms that allowed holds for: a permission
// whose every pair is allowed stays as it is, one allowed in part is replaced by the
// `<resource>/<action>` pairs allowed.
func tokenPermissionsWithin(perms []string, allowed func(resource, action string) bool) []string {
	kept := make([]string, 0, len(perms))
	seen := map[string]bool{}
	keep := func(p string) {
		if !seen[p] {
			seen[p] = true
			kept = append(kept, p)
		}
	}
	for _, p := range perms {
		if tokenCovered(p, allowed) {
			keep(p)
			continue
		}
		for _, ra := range expandPermission(p) {
			if allowed(ra[0], ra[1]) {
				keep(ra[0] + "/" + ra[1])
			}
		}
	}
	return kept
}

func tokenGrantsAny(grants []string, resource, action string) bool {
	return slices.ContainsFunc(grants, func(g string) bool { return auth.Grants(g, resource, action) })
}

// tokenScope is where a token acts: its team, its workflow, or the whole instance.
func tokenScope(t domain.Token) auth.Scope {
	return auth.Scope{Team: t.Team, Workflow: t.Workflow}
}

func describeTokenScope(s auth.Scope) string {
	switch {
	case s.Workflow != "":
		return "workflow '" + s.Team + "/" + s.Workflow + "'"
	case s.Team != "":
		return "team '" + s.Team + "'"
	}
	return "this instance"
}

func tokenCallerKnown(p auth.Principal) bool {
	return p.Type != "" && p.Type != auth.TypeAnonymous
}

// tokenActsAsUser reports whether p is a person: signed in, or through one of their tokens.
func tokenActsAsUser(p auth.Principal) bool {
	return p.Type == auth.TypeUser || p.Type == auth.TypeSession
}

// tokenCreatorKey is how a creator is recognised later: a person by user id whichever of
// their credentials they use, a token by its id (team tokens share their principal id, the
// team name), anything else by type and id.
func tokenCreatorKey(p auth.Principal) string {
	switch {
	case tokenActsAsUser(p):
		return "user:" + p.ID
	case p.TokenID != "":
		return "token:" + p.TokenID
	}
	return p.Type + ":" + p.ID
}

// tokenCreatedBy is the creator as the API shows it.
func tokenCreatedBy(p auth.Principal) string {
	if !tokenActsAsUser(p) && p.TokenID != "" {
		return p.TokenID
	}
	return p.ID
}

// tokenAudience is which tokens p may read or delete (action): those it created, a user's
// own, those of the teams it owns (where it may delete tokens), and, for admins, all. A
// user token narrowed to permissions without token/<action> reaches none.
func tokenAudience(p auth.Principal, action string) domain.TokenAudience {
	if !tokenCallerKnown(p) || (tokenNarrowed(p) && !tokenGrantsAny(p.Permissions, "token", action)) {
		return domain.TokenAudience{}
	}
	if p.IsAdmin() {
		return domain.TokenAudience{All: true}
	}
	a := domain.TokenAudience{Creator: tokenCreatorKey(p)}
	switch p.Type {
	case auth.TypeUser, auth.TypeSession:
		a.UserID = p.ID
		for team, role := range p.Teams {
			if tokenGrantsAny(auth.TeamRoles[role], "token", "delete") {
				a.Teams = append(a.Teams, team)
			}
		}
	case auth.TypeTeam:
		if p.Can(auth.TeamScope(p.Team), "token", "delete") {
			a.Teams = []string{p.Team}
		}
	}
	slices.Sort(a.Teams)
	return a
}

// FindTokens searches the tokens caller may see.
func (s *Tokens) FindTokens(ctx context.Context, caller auth.Principal, f domain.TokenFilter, p page.Request) (page.Page[domain.Token], error) {
	if !tokenCallerKnown(caller) {
		return page.Page[domain.Token]{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	f.Audience = tokenAudience(caller, "read")
	tokens, total, err := s.store.FindTokens(ctx, f, p)
	if err != nil {
		return page.Page[domain.Token]{}, err
	}
	return page.New(tokens, p, total), nil
}

// RevokeToken revokes the token with id, if caller may see it; tokens it may not see are
// answered as not found, so their ids reveal nothing. Revoking twice answers the token.
func (s *Tokens) RevokeToken(ctx context.Context, caller auth.Principal, id string) (domain.Token, error) {
	if !tokenCallerKnown(caller) {
		return domain.Token{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	if !domain.IsObjectID(id) {
		return domain.Token{}, domain.TokenNotFound(id)
	}
	t, err := s.store.FindTokenByID(ctx, id)
	if err != nil {
		return domain.Token{}, err
	}
	if !tokenAudience(caller, "delete").Sees(t) {
		return domain.Token{}, domain.TokenNotFound(id)
	}
	if t.Revoked() {
		return t, nil
	}
	return s.store.RevokeToken(ctx, id, s.now().UTC().Truncate(time.Millisecond))
}

// RevokeUserTokens revokes every user and session token of a user, for when the user is
// deleted. It is idempotent.
func (s *Tokens) RevokeUserTokens(ctx context.Context, userID string) error {
	return s.store.RevokeUserTokens(ctx, userID, s.now().UTC().Truncate(time.Millisecond))
}

// TokenAuthentication is what a secret authenticates as.
type TokenAuthentication struct {
	Principal auth.Principal
	// Expires is when the token stops working, if it expires at all: nobody may keep the
	// answer past it.
	Expires *time.Time
}

// errTokenNotAccepted is the one answer to every secret that does not authenticate;
// callers learn nothing about why.
var errTokenNotAccepted = apperr.New(apperr.Unauthenticated, "The credential is not valid.")

// Authenticate returns the principal a secret acts as, or UNAUTHENTICATED for a secret
// that is malformed, unknown, revoked or expired, or whose team or user is gone, or one of
// the tokens it was made with no longer works, or the person who made it may no longer sign
// in. A team, workflow or global token made by a person acts with those of its permissions
// that person still holds: a token's rights and life never exceed its creator's. It is one
// lookup by the secret's hash, plus the team or the user for those tokens, the ancestors
// (one lookup) and the person who made it.
func (s *Tokens) Authenticate(ctx context.Context, secret string) (TokenAuthentication, error) {
	typ, ok := domain.SecretType(secret)
	if !ok {
		return TokenAuthentication{}, errTokenNotAccepted
	}
	hash := domain.HashSecret(secret)
	t, err := s.store.FindTokenByHash(ctx, hash)
	if errors.Is(err, domain.ErrTokenNotFound) {
		return TokenAuthentication{}, errTokenNotAccepted
	}
	if err != nil {
		return TokenAuthentication{}, err
	}
	// The store found the token by this hash already; comparing again in constant time
	// keeps a store that matched loosely (collation, prefix) from letting anything through.
	if subtle.ConstantTimeCompare([]byte(t.Hash), []byte(hash)) != 1 || t.Type != typ {
		return TokenAuthentication{}, errTokenNotAccepted
	}
	now := s.now()
	if !t.Valid(now) {
		return TokenAuthentication{}, errTokenNotAccepted
	}
	expires, err := s.ancestorsValid(ctx, t, now)
	if err != nil {
		return TokenAuthentication{}, err
	}

	// The person answerable for a token is whoever is at the root of its making (recorded
	// when it was made, through every token in between); a user token's is its user.
	p := auth.Principal{Type: string(t.Type), Name: t.Name, TokenID: t.ID, Permissions: slices.Clone(t.Permissions),
		Person: t.CreatorUser()}
	switch t.Type {
	case domain.TokenGlobal:
		p.ID = t.ID
	case domain.TokenTeam, domain.TokenWorkflow:
		live, err := s.teams.TeamLive(ctx, t.TeamID, t.Team)
		if err != nil {
			return TokenAuthentication{}, err
		}
		if !live {
			return TokenAuthentication{}, errTokenNotAccepted
		}
		p.ID, p.Team, p.Workflow = t.Principal, t.Team, t.Workflow
	case domain.TokenUser, domain.TokenSession:
		if p, err = s.userPrincipal(ctx, t); err != nil {
			return TokenAuthentication{}, err
		}
	default:
		return TokenAuthentication{}, errTokenNotAccepted
	}
	if p.Permissions, err = s.withinCreator(ctx, t, p.Permissions); err != nil {
		return TokenAuthentication{}, err
	}

	if t.LastUsed == nil || now.Sub(*t.LastUsed) >= tokenTouchEvery {
		// Best effort: a missed lastUsed must not fail a request that authenticated.
		_ = s.store.TouchToken(ctx, t.Hash, now.UTC().Truncate(time.Millisecond))
	}
	return TokenAuthentication{Principal: p, Expires: expires}, nil
}

// ancestorsValid checks that every token t was made with still works at now: neither
// revoked nor expired, and made by people who may still sign in. It returns when the first
// of t and them expires.
func (s *Tokens) ancestorsValid(ctx context.Context, t domain.Token, now time.Time) (*time.Time, error) {
	expires := t.ExpirationDate
	if len(t.Ancestors) == 0 {
		return expires, nil
	}
	found, err := s.store.FindTokensByHashes(ctx, t.Ancestors)
	if err != nil {
		return nil, err
	}
	valid := map[string]bool{}
	people := map[string]bool{}
	for _, a := range found {
		if !a.Valid(now) {
			continue
		}
		valid[a.Hash] = true
		// Usually everyone in a chain was made by t's own person; a user token an admin made
		// for someone also hangs on the admin.
		if id := a.CreatorUser(); id != "" && id != t.CreatorUser() {
			people[id] = true
		}
		if a.ExpirationDate != nil && (expires == nil || a.ExpirationDate.Before(*expires)) {
			expires = a.ExpirationDate
		}
	}
	for _, h := range t.Ancestors {
		if !valid[h] {
			return nil, errTokenNotAccepted
		}
	}
	for id := range people {
		if err := s.personAlive(ctx, id); err != nil {
			return nil, err
		}
	}
	return expires, nil
}

// personAlive answers errTokenNotAccepted when the user with id may no longer sign in.
func (s *Tokens) personAlive(ctx context.Context, id string) error {
	if s.users == nil {
		return nil
	}
	_, err := s.users.ForUser(ctx, id)
	if apperr.HasReason(err, apperr.UserNotFound) || apperr.HasReason(err, apperr.Unauthenticated) {
		return errTokenNotAccepted
	}
	return err
}

// withinCreator checks that the person who made t may still sign in, and narrows the
// permissions of a team, workflow or global token to those that person still holds in the
// token's scope. A user or session token acts as its user, whose rights are checked at each
// use already; made by someone else (an admin), it needs that person alive too.
func (s *Tokens) withinCreator(ctx context.Context, t domain.Token, perms []string) ([]string, error) {
	creatorID := t.CreatorUser()
	if creatorID == "" || s.users == nil || (t.UserID != "" && creatorID == t.UserID) {
		return perms, nil
	}
	creator, err := s.users.ForUser(ctx, creatorID)
	if apperr.HasReason(err, apperr.UserNotFound) || apperr.HasReason(err, apperr.Unauthenticated) {
		return nil, errTokenNotAccepted
	}
	if err != nil {
		return nil, err
	}
	if t.Type == domain.TokenUser || t.Type == domain.TokenSession {
		return perms, nil
	}
	scope := tokenScope(t)
	return tokenPermissionsWithin(perms, func(res, act string) bool { return creator.Can(scope, res, act) }), nil
}

// userPrincipal is the principal of a user or session token: its user as they are now,
// narrowed to the token's permissions, with the user as its person.
func (s *Tokens) userPrincipal(ctx context.Context, t domain.Token) (auth.Principal, error) {
	p := auth.Principal{ID: t.UserID}
	if s.users != nil {
		var err error
		p, err = s.users.ForUser(ctx, t.UserID)
		if apperr.HasReason(err, apperr.UserNotFound) {
			return auth.Principal{}, errTokenNotAccepted
		}
		if err != nil {
			return auth.Principal{}, err
		}
		if p.ID != t.UserID {
			return auth.Principal{}, fmt.Errorf("user principal of %s names %s", t.UserID, p.ID)
		}
	}
	p.Type = string(t.Type)
	p.TokenID = t.ID
	p.Permissions = slices.Clone(t.Permissions)
	// A user token acts as its user, who answers for it even when an admin made it.
	p.Person = t.UserID
	return p, nil
}
