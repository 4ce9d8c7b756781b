package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// tokMemTokens is an in-memory TokenStore.
type tokMemTokens struct {
	mu      sync.Mutex
	byHash  map[string]domain.Token
	touches int
	// outside are the tokens the fixture's token principals authenticated with, made before
	// the test: found by id and hash, never listed.
	outside map[string]domain.Token
}

func tokNewMemTokens() *tokMemTokens {
	m := &tokMemTokens{byHash: map[string]domain.Token{}, outside: map[string]domain.Token{}}
	for _, p := range []auth.Principal{tokNarrowed, tokNarrowedAdmin, tokTeamAll, tokTeamRead, tokBuildAll} {
		m.outside[p.TokenID] = domain.Token{ID: p.TokenID, Hash: "hash-" + p.TokenID, Type: domain.TokenType(p.Type), Permissions: p.Permissions}
	}
	return m
}

func (m *tokMemTokens) FindTokensByHashes(_ context.Context, hashes []string) ([]domain.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Token
	for _, h := range hashes {
		if t, ok := m.byHash[h]; ok {
			out = append(out, t)
		}
		for _, t := range m.outside {
			if t.Hash == h {
				out = append(out, t)
			}
		}
	}
	return out, nil
}

func (m *tokMemTokens) CreateToken(_ context.Context, t domain.Token) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.byHash[t.Hash] = t
	return nil
}

func (m *tokMemTokens) FindTokenByHash(_ context.Context, hash string) (domain.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.byHash[hash]
	if !ok {
		return domain.Token{}, domain.ErrTokenNotFound
	}
	return t, nil
}

func (m *tokMemTokens) FindTokenByID(_ context.Context, id string) (domain.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range m.byHash {
		if t.ID == id {
			return t, nil
		}
	}
	if t, ok := m.outside[id]; ok {
		return t, nil
	}
	return domain.Token{}, domain.TokenNotFound(id)
}

func (m *tokMemTokens) FindTokens(_ context.Context, f domain.TokenFilter, p page.Request) ([]domain.Token, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.Token
	for _, t := range m.byHash {
		if !f.Audience.Sees(t) ||
			(len(f.Types) > 0 && !slices.Contains(f.Types, t.Type)) ||
			(len(f.Principals) > 0 && !slices.Contains(f.Principals, t.Principal)) {
			continue
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b domain.Token) int { return cmp.Compare(a.ID, b.ID) })
	return out, int64(len(out)), nil
}

func (m *tokMemTokens) RevokeToken(_ context.Context, id string, at time.Time) (domain.Token, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.byHash {
		if t.ID == id {
			if t.RevokedDate == nil {
				t.RevokedDate = &at
				m.byHash[h] = t
			}
			for dh, d := range m.byHash {
				if slices.Contains(d.Ancestors, t.Hash) && d.RevokedDate == nil {
					d.RevokedDate = &at
					m.byHash[dh] = d
				}
			}
			return t, nil
		}
	}
	return domain.Token{}, domain.TokenNotFound(id)
}

func (m *tokMemTokens) RevokeUserTokens(_ context.Context, userID string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.byHash {
		if (t.UserID == userID || t.CreatorUser() == userID) && t.RevokedDate == nil {
			t.RevokedDate = &at
			m.byHash[h] = t
		}
	}
	return nil
}

func (m *tokMemTokens) TouchToken(_ context.Context, hash string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.byHash[hash]
	t.LastUsed = &at
	m.byHash[hash] = t
	m.touches++
	return nil
}

// tokMemTeams knows teams by name and record id; a team recreated under a name gets a new id.
type tokMemTeams struct {
	mu  sync.Mutex
	ids map[string]string
}

func (m *tokMemTeams) TeamID(_ context.Context, name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ids[name]
	if !ok {
		return "", domain.TeamNotFound(name)
	}
	return id, nil
}

func (m *tokMemTeams) TeamLive(_ context.Context, id, name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ids[name] == id, nil
}

func (m *tokMemTeams) set(name, id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == "" {
		delete(m.ids, name)
		return
	}
	m.ids[name] = id
}

// tokMemUsers answers ForUser from a table.
type tokMemUsers map[string]auth.Principal

func (m tokMemUsers) ForUser(_ context.Context, id string) (auth.Principal, error) {
	p, ok := m[id]
	if !ok {
		return auth.Principal{}, apperr.New(apperr.UserNotFound, "User '%s' was not found.", id)
	}
	return p, nil
}

const (
	tokOwnerID  = "000000000000000000000001"
	tokEditorID = "000000000000000000000002"
	tokReaderID = "000000000000000000000003"
	tokAdminID  = "000000000000000000000004"
	tokStrayID  = "000000000000000000000009"
)

var (
	tokOwner    = auth.Principal{Type: auth.TypeUser, ID: tokOwnerID, Teams: map[string]string{"infra": auth.RoleOwner}}
	tokEditor   = auth.Principal{Type: auth.TypeUser, ID: tokEditorID, Teams: map[string]string{"infra": auth.RoleEditor}}
	tokReader   = auth.Principal{Type: auth.TypeUser, ID: tokReaderID, Teams: map[string]string{"infra": auth.RoleReader}}
	tokAdmin    = auth.Principal{Type: auth.TypeUser, ID: tokAdminID, Roles: []string{auth.RoleAdmin}}
	tokOperator = auth.Principal{Type: auth.TypeUser, ID: "000000000000000000000005", Roles: []string{auth.RoleOperator}}
	// tokNarrowed is the owner through a user token that may only read workflows (and make tokens).
	tokNarrowed = auth.Principal{Type: auth.TypeUser, ID: tokOwnerID, TokenID: "t-narrow", Teams: tokOwner.Teams, Permissions: []string{"workflow/read", "token/write"}}
	// tokNarrowedAdmin is an admin through a user token that may only read.
	tokNarrowedAdmin = auth.Principal{Type: auth.TypeUser, ID: tokAdminID, TokenID: "t-admin-read", Roles: []string{auth.RoleAdmin}, Permissions: []string{"**/read"}}
	tokTeamAll       = auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t-all", Permissions: []string{"**/**"}}
	tokTeamRead      = auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t-read", Permissions: []string{"**/read"}}
	tokBuildAll      = auth.Principal{Type: auth.TypeWorkflow, ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t-build", Permissions: []string{"**/**"}}
	tokBootstrap     = auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{auth.RoleAdmin}}
	tokAllPrincipals = tokMemUsers{tokOwnerID: tokOwner, tokEditorID: tokEditor, tokReaderID: tokReader, tokAdminID: tokAdmin}
)

type tokenFixture struct {
	tokens *Tokens
	store  *tokMemTokens
	teams  *tokMemTeams
	now    time.Time
	mu     sync.Mutex
}

func newTokenFixture(t *testing.T) *tokenFixture {
	t.Helper()
	f := &tokenFixture{
		store: tokNewMemTokens(),
		teams: &tokMemTeams{ids: map[string]string{"infra": "team-infra-1", "ops": "team-ops-1"}},
		now:   time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC),
	}
	var n int
	f.tokens = NewTokens(f.store, f.teams, tokAllPrincipals, func() string {
		n++
		return fmt.Sprintf("%024x", n)
	})
	f.tokens.now = func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.now
	}
	return f
}

func (f *tokenFixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func (f *tokenFixture) mint(t *testing.T, caller auth.Principal, r domain.TokenRequest) CreatedToken {
	t.Helper()
	c, err := f.tokens.CreateToken(context.Background(), caller, r)
	require.NoError(t, err)
	return c
}

func TestCreateTokenNeverGrantsMoreThanTheCallerHolds(t *testing.T) {
	t.Parallel()
	team := func(team string, perms ...string) domain.TokenRequest {
		return domain.TokenRequest{Type: domain.TokenTeam, Principal: team, Permissions: perms}
	}
	global := func(perms ...string) domain.TokenRequest {
		return domain.TokenRequest{Type: domain.TokenGlobal, Permissions: perms}
	}
	workflow := func(ref string, perms ...string) domain.TokenRequest {
		return domain.TokenRequest{Type: domain.TokenWorkflow, Principal: ref, Permissions: perms}
	}
	user := func(id string, perms ...string) domain.TokenRequest {
		return domain.TokenRequest{Type: domain.TokenUser, Principal: id, Permissions: perms}
	}
	tests := []struct {
		name          string
		caller        auth.Principal
		req           domain.TokenRequest
		wantReason    apperr.Reason // zero: created
		wantPrincipal string
	}{
		{name: "owner, everything in the team", caller: tokOwner, req: team("infra", "**/**"), wantPrincipal: "infra"},
		{name: "editor cannot grant delete", caller: tokEditor, req: team("infra", "**/**"), wantReason: apperr.TokenInvalidPermission},
		{name: "editor, what an editor holds", caller: tokEditor, req: team("infra", "workflow/write", "workflowrun/action", "**/read"), wantPrincipal: "infra"},
		{name: "reader may not make team tokens", caller: tokReader, req: team("infra", "**/read"), wantReason: apperr.PermissionDenied},
		{name: "owner of another team", caller: tokOwner, req: team("ops", "**/read"), wantReason: apperr.PermissionDenied},
		{name: "a team that does not exist, to a non-member", caller: tokOwner, req: team("ghost", "**/read"), wantReason: apperr.PermissionDenied},
		{name: "admin, any team", caller: tokAdmin, req: team("ops", "**/**"), wantPrincipal: "ops"},
		{name: "admin, a team that does not exist", caller: tokAdmin, req: team("ghost", "**/read"), wantReason: apperr.TeamNotFound},
		{name: "bootstrap admin", caller: tokBootstrap, req: team("infra", "**/**"), wantPrincipal: "infra"},
		{name: "team token, within itself", caller: tokTeamAll, req: team("infra", "workflow/read"), wantPrincipal: "infra"},
		{name: "reading team token may not make tokens", caller: tokTeamRead, req: team("infra", "workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "team token, global token", caller: tokTeamAll, req: global("workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "team token, another team", caller: tokTeamAll, req: team("ops", "workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "team owner, global token", caller: tokOwner, req: global("workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "operator, global reader", caller: tokOperator, req: global("**/read"), wantPrincipal: ""},
		{name: "operator cannot grant delete", caller: tokOperator, req: global("**/**"), wantReason: apperr.TokenInvalidPermission},
		{name: "operator cannot grant one delete", caller: tokOperator, req: global("workflow/read", "team/delete"), wantReason: apperr.TokenInvalidPermission},
		{name: "owner, workflow token", caller: tokOwner, req: workflow("infra/build", "workflowrun/write", "workflow/read"), wantPrincipal: "infra/build"},
		{name: "workflow token, its workflow", caller: tokBuildAll, req: workflow("infra/build", "workflowrun/write"), wantPrincipal: "infra/build"},
		{name: "workflow token, another workflow", caller: tokBuildAll, req: workflow("infra/deploy", "workflowrun/write"), wantReason: apperr.PermissionDenied},
		{name: "workflow token, its team", caller: tokBuildAll, req: team("infra", "workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "user token for oneself, by default", caller: tokReader, req: user(""), wantPrincipal: tokReaderID},
		{name: "user token for oneself, narrowed", caller: tokReader, req: user(tokReaderID, "**/read"), wantPrincipal: tokReaderID},
		{name: "user token for someone else", caller: tokOwner, req: user(tokReaderID), wantReason: apperr.TokenInvalidPermission},
		{name: "admin, user token for someone", caller: tokAdmin, req: user(tokReaderID), wantPrincipal: tokReaderID},
		{name: "admin, user token for nobody", caller: tokAdmin, req: user(tokStrayID), wantReason: apperr.UserNotFound},
		{name: "narrowed token, narrower user token", caller: tokNarrowed, req: user(tokOwnerID, "workflow/read"), wantPrincipal: tokOwnerID},
		{name: "narrowed token cannot widen", caller: tokNarrowed, req: user(tokOwnerID, "**/read"), wantReason: apperr.TokenInvalidPermission},
		{name: "narrowed token cannot drop its narrowing", caller: tokNarrowed, req: user(""), wantReason: apperr.TokenInvalidPermission},
		{name: "narrowed token, team token beyond it", caller: tokNarrowed, req: team("infra", "workflow/write"), wantReason: apperr.TokenInvalidPermission},
		{name: "narrowed admin cannot widen itself", caller: tokNarrowedAdmin, req: user(""), wantReason: apperr.TokenInvalidPermission},
		{name: "narrowed admin cannot widen someone", caller: tokNarrowedAdmin, req: user(tokReaderID, "**/write"), wantReason: apperr.TokenInvalidPermission},
		{name: "narrowed admin, within itself, for someone", caller: tokNarrowedAdmin, req: user(tokReaderID, "workflow/read"), wantPrincipal: tokReaderID},
		{name: "narrowed admin may not make team tokens", caller: tokNarrowedAdmin, req: team("infra", "workflow/read"), wantReason: apperr.PermissionDenied},
		{name: "team token wants a user token", caller: tokTeamAll, req: user(""), wantReason: apperr.TokenInvalidReq},
		{name: "unknown permission", caller: tokOwner, req: team("infra", "workflow/fly"), wantReason: apperr.TokenInvalidReq},
		{name: "malformed permission", caller: tokOwner, req: team("infra", "workflow"), wantReason: apperr.TokenInvalidReq},
		{name: "session", caller: tokAdmin, req: domain.TokenRequest{Type: domain.TokenSession}, wantReason: apperr.TokenInvalidSessionReq},
		{name: "anonymous", caller: auth.Anonymous, req: team("infra", "**/read"), wantReason: apperr.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newTokenFixture(t)
			c, err := f.tokens.CreateToken(context.Background(), tt.caller, tt.req)
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "want %s, got %v", tt.wantReason.Name, err)
				assert.Empty(t, f.store.byHash, "nothing stored")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPrincipal, c.Token.Principal)
			typ, ok := domain.SecretType(c.Secret)
			require.True(t, ok, c.Secret)
			assert.Equal(t, c.Token.Type, typ)
			stored, err := f.store.FindTokenByHash(context.Background(), domain.HashSecret(c.Secret))
			require.NoError(t, err)
			assert.Equal(t, c.Token, stored)
			assert.NotContains(t, fmt.Sprintf("%+v", stored), c.Secret, "only the hash is stored")
		})
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	ctx := context.Background()
	in := f.now.Add(time.Hour)
	teamTok := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Name: "ci", Principal: "infra", Permissions: []string{"**/read"}, ExpirationDate: &in})
	wfTok := f.mint(t, tokOwner, domain.TokenRequest{Type: "workflow", Principal: "infra/build", Permissions: []string{"workflowrun/write"}})
	globalTok := f.mint(t, tokAdmin, domain.TokenRequest{Type: "global", Permissions: []string{"insights/read"}})
	userTok := f.mint(t, tokReader, domain.TokenRequest{Type: "user", Permissions: []string{"workflow/read"}})

	tests := []struct {
		name        string
		secret      string
		want        auth.Principal
		wantExpires *time.Time
	}{
		{name: "team token", secret: teamTok.Secret, wantExpires: &in, want: auth.Principal{
			Type: "team", ID: "infra", Name: "ci", Team: "infra", TokenID: teamTok.Token.ID, Permissions: []string{"**/read"},
			Person: tokOwnerID}},
		{name: "workflow token", secret: wfTok.Secret, want: auth.Principal{
			Type: "workflow", ID: "infra/build", Team: "infra", Workflow: "build", TokenID: wfTok.Token.ID, Permissions: []string{"workflowrun/write"},
			Person: tokOwnerID}},
		{name: "global token", secret: globalTok.Secret, want: auth.Principal{
			Type: "global", ID: globalTok.Token.ID, TokenID: globalTok.Token.ID, Permissions: []string{"insights/read"},
			Person: tokAdminID}},
		{name: "user token acts as its user, narrowed", secret: userTok.Secret, want: auth.Principal{
			Type: "user", ID: tokReaderID, Teams: tokReader.Teams, TokenID: userTok.Token.ID, Permissions: []string{"workflow/read"},
			Person: tokReaderID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.tokens.Authenticate(ctx, tt.secret)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.Principal)
			assert.Equal(t, tt.wantExpires, got.Expires)
		})
	}

	refused := []struct {
		name   string
		secret string
		before func()
	}{
		{name: "empty", secret: ""},
		{name: "malformed", secret: "not-a-token"},
		{name: "well formed, unknown", secret: "btt_" + strings.Repeat("A", 43)},
		{name: "type letter changed", secret: "btg_" + teamTok.Secret[4:]},
		{name: "revoked", secret: globalTok.Secret, before: func() {
			_, err := f.tokens.RevokeToken(ctx, tokAdmin, globalTok.Token.ID)
			require.NoError(t, err)
		}},
		{name: "its team was deleted and made again", secret: wfTok.Secret, before: func() { f.teams.set("infra", "team-infra-2") }},
		{name: "its user is gone", secret: userTok.Secret, before: func() {
			f.tokens.users = tokMemUsers{}
		}},
		{name: "expired", secret: teamTok.Secret, before: func() { f.advance(time.Hour) }},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			_, err := f.tokens.Authenticate(ctx, tt.secret)
			require.Error(t, err)
			assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
		})
	}
}

func TestAuthenticateRecordsUseAtMostEveryMinute(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	c := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/read"}})
	for range 3 {
		_, err := f.tokens.Authenticate(context.Background(), c.Secret)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, f.store.touches)
	f.advance(time.Minute)
	_, err := f.tokens.Authenticate(context.Background(), c.Secret)
	require.NoError(t, err)
	assert.Equal(t, 2, f.store.touches)
	stored, err := f.store.FindTokenByID(context.Background(), c.Token.ID)
	require.NoError(t, err)
	assert.Equal(t, f.now, *stored.LastUsed)
}

func TestTokenVisibility(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	ctx := context.Background()
	byOwner := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/read"}})
	byTeamToken := f.mint(t, tokTeamAll, domain.TokenRequest{Type: "workflow", Principal: "infra/build", Permissions: []string{"workflow/read"}})
	byAdmin := f.mint(t, tokAdmin, domain.TokenRequest{Type: "team", Principal: "ops", Permissions: []string{"**/read"}})
	forReader := f.mint(t, tokAdmin, domain.TokenRequest{Type: "user", Principal: tokReaderID})
	byEditor := f.mint(t, tokEditor, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"workflow/read"}})

	ids := func(cs ...CreatedToken) []string {
		out := []string{}
		for _, c := range cs {
			out = append(out, c.Token.ID)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name   string
		caller auth.Principal
		want   []string
	}{
		{"admin sees all", tokAdmin, ids(byOwner, byTeamToken, byAdmin, forReader, byEditor)},
		{"owner sees the team's", tokOwner, ids(byOwner, byTeamToken, byEditor)},
		{"editor sees its own", tokEditor, ids(byEditor)},
		{"reader sees the token made for them", tokReader, ids(forReader)},
		{"team token that may delete tokens sees its team's", tokTeamAll, ids(byOwner, byTeamToken, byEditor)},
		{"reading team token sees nothing", tokTeamRead, ids()},
		{"operator sees only its own", tokOperator, ids()},
		{"a narrowed admin token without token/read sees nothing", auth.Principal{Type: auth.TypeUser, ID: tokAdminID, TokenID: "t", Roles: []string{auth.RoleAdmin}, Permissions: []string{"workflow/read"}}, ids()},
		{"a narrowed admin token with token/read sees all", tokNarrowedAdmin, ids(byOwner, byTeamToken, byAdmin, forReader, byEditor)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := f.tokens.FindTokens(ctx, tt.caller, domain.TokenFilter{}, page.Request{Size: 100})
			require.NoError(t, err)
			got := []string{}
			for _, tok := range res.Content {
				got = append(got, tok.ID)
			}
			assert.Equal(t, tt.want, got)
			assert.EqualValues(t, len(tt.want), res.TotalElements)
		})
	}

	t.Run("revoking needs visibility", func(t *testing.T) {
		_, err := f.tokens.RevokeToken(ctx, tokEditor, byOwner.Token.ID)
		assert.True(t, apperr.HasReason(err, apperr.TokenNotFound), "%v", err)
		_, err = f.tokens.RevokeToken(ctx, tokOwner, "not-an-id")
		assert.True(t, apperr.HasReason(err, apperr.TokenNotFound), "%v", err)
		_, err = f.tokens.RevokeToken(ctx, tokNarrowedAdmin, byOwner.Token.ID)
		assert.True(t, apperr.HasReason(err, apperr.TokenNotFound), "a read-only admin token revokes nothing: %v", err)

		got, err := f.tokens.RevokeToken(ctx, tokOwner, byEditor.Token.ID)
		require.NoError(t, err)
		assert.False(t, got.Valid(f.now))
		again, err := f.tokens.RevokeToken(ctx, tokEditor, byEditor.Token.ID)
		require.NoError(t, err)
		assert.Equal(t, got.RevokedDate, again.RevokedDate, "revoking twice keeps the first date")
	})

	t.Run("a deleted user's tokens are revoked", func(t *testing.T) {
		require.NoError(t, f.tokens.RevokeUserTokens(ctx, tokReaderID))
		_, err := f.tokens.Authenticate(ctx, forReader.Secret)
		assert.True(t, apperr.HasReason(err, apperr.Unauthenticated))
	})
}

func TestSecretsAreRandom(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	f.tokens.rand = rand.Reader
	a := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/read"}})
	b := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/read"}})
	assert.NotEqual(t, a.Secret, b.Secret)
	assert.NotEqual(t, a.Token.Hash, b.Token.Hash)
}
