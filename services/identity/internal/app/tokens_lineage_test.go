package app

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// principalOf authenticates c and returns the principal its secret acts as.
func (f *tokenFixture) principalOf(t *testing.T, c CreatedToken) auth.Principal {
	t.Helper()
	a, err := f.tokens.Authenticate(context.Background(), c.Secret)
	require.NoError(t, err)
	return a.Principal
}

func requireRefused(t *testing.T, f *tokenFixture, c CreatedToken, why string) {
	t.Helper()
	_, err := f.tokens.Authenticate(context.Background(), c.Secret)
	require.Error(t, err, why)
	assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%s: %v", why, err)
}

func TestTokensMadeWithTokensExpireNoLaterThanThem(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	hour, day := f.now.Add(time.Hour), f.now.Add(24*time.Hour)
	parent := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}, ExpirationDate: &hour})
	tests := []struct {
		name string
		ask  *time.Time
		want time.Time
	}{
		{"no expiry asked: the parent's", nil, hour},
		{"later than the parent: the parent's", &day, hour},
		{"earlier than the parent: as asked", ptr(f.now.Add(time.Minute)), f.now.Add(time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			child := f.mint(t, f.principalOf(t, parent), domain.TokenRequest{Type: "workflow", Principal: "infra/build",
				Permissions: []string{"workflowrun/read"}, ExpirationDate: tt.ask})
			require.NotNil(t, child.Token.ExpirationDate)
			assert.Equal(t, tt.want, *child.Token.ExpirationDate)
			a, err := f.tokens.Authenticate(context.Background(), child.Secret)
			require.NoError(t, err)
			assert.Equal(t, tt.want, *a.Expires, "nobody caches the answer past the expiry")
			assert.Equal(t, []string{parent.Token.Hash}, child.Token.Ancestors)
			assert.Equal(t, tokOwnerID, child.Token.CreatorUserID, "the person at the root")
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestTokensMadeWithTokensDieWithThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// end ends parent's life in the fixture.
		end func(t *testing.T, f *tokenFixture, parent CreatedToken)
	}{
		{"parent revoked", func(t *testing.T, f *tokenFixture, parent CreatedToken) {
			_, err := f.tokens.RevokeToken(ctx, tokOwner, parent.Token.ID)
			require.NoError(t, err)
		}},
		{"parent revoked, the cascade lost", func(t *testing.T, f *tokenFixture, parent CreatedToken) {
			// As if the write revoking the descendants never happened: authentication
			// still refuses them, because it checks the ancestors.
			f.store.mu.Lock()
			defer f.store.mu.Unlock()
			p := f.store.byHash[parent.Token.Hash]
			p.RevokedDate = ptr(f.now)
			f.store.byHash[parent.Token.Hash] = p
		}},
		{"parent expired", func(t *testing.T, f *tokenFixture, _ CreatedToken) { f.advance(2 * time.Hour) }},
		{"the person who made the parent deleted", func(t *testing.T, f *tokenFixture, _ CreatedToken) {
			require.NoError(t, f.tokens.RevokeUserTokens(ctx, tokOwnerID))
		}},
		{"the person who made the parent cannot sign in any more", func(t *testing.T, f *tokenFixture, _ CreatedToken) {
			f.tokens.users = tokMemUsers{tokAdminID: tokAdmin} // ForUser: USER_NOT_FOUND
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newTokenFixture(t)
			exp := f.now.Add(2 * time.Hour)
			parent := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}, ExpirationDate: &exp})
			child := f.mint(t, f.principalOf(t, parent), domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"token/write", "workflow/read"}})
			grandchild := f.mint(t, f.principalOf(t, child), domain.TokenRequest{Type: "workflow", Principal: "infra/build", Permissions: []string{"workflow/read"}})
			assert.Equal(t, []string{parent.Token.Hash, child.Token.Hash}, grandchild.Token.Ancestors)
			sibling := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"workflow/read"}})

			tt.end(t, f, parent)
			requireRefused(t, f, parent, "parent")
			requireRefused(t, f, child, "child")
			requireRefused(t, f, grandchild, "grandchild")
			if tt.name == "parent revoked" {
				f.principalOf(t, sibling) // made by the person, not by the parent: unaffected
			}
		})
	}

	t.Run("revoking the child leaves the parent", func(t *testing.T) {
		t.Parallel()
		f := newTokenFixture(t)
		parent := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}})
		child := f.mint(t, f.principalOf(t, parent), domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"token/write", "workflow/read"}})
		grandchild := f.mint(t, f.principalOf(t, child), domain.TokenRequest{Type: "workflow", Principal: "infra/build", Permissions: []string{"workflow/read"}})
		_, err := f.tokens.RevokeToken(ctx, tokOwner, child.Token.ID)
		require.NoError(t, err)
		stored, err := f.store.FindTokenByID(ctx, grandchild.Token.ID)
		require.NoError(t, err)
		assert.True(t, stored.Revoked(), "the cascade is stored: listings show the grandchild invalid")
		requireRefused(t, f, child, "child")
		requireRefused(t, f, grandchild, "grandchild")
		f.principalOf(t, parent)
	})

	t.Run("a token made through a user token an admin made hangs on both people", func(t *testing.T) {
		t.Parallel()
		f := newTokenFixture(t)
		edTok := f.mint(t, tokAdmin, domain.TokenRequest{Type: "user", Principal: tokEditorID})
		ed := f.principalOf(t, edTok)
		teamTok := f.mint(t, ed, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"workflow/read"}})
		assert.Equal(t, tokEditorID, teamTok.Token.CreatorUserID, "the person acting")
		assert.Equal(t, []string{edTok.Token.Hash}, teamTok.Token.Ancestors)
		f.principalOf(t, teamTok)

		f.tokens.users = tokMemUsers{tokEditorID: tokEditor} // the admin may no longer sign in
		requireRefused(t, f, edTok, "the user token the admin made")
		requireRefused(t, f, teamTok, "the token made with it")
		f.tokens.users = tokAllPrincipals
		f.principalOf(t, teamTok)
		f.tokens.users = tokMemUsers{tokAdminID: tokAdmin} // the editor may no longer sign in
		requireRefused(t, f, edTok, "the editor's user token")
		requireRefused(t, f, teamTok, "the editor's team token")
	})

	t.Run("a revoked token makes nothing", func(t *testing.T) {
		t.Parallel()
		f := newTokenFixture(t)
		parent := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}})
		p := f.principalOf(t, parent) // as the gateway may still hold it for a few seconds
		_, err := f.tokens.RevokeToken(ctx, tokOwner, parent.Token.ID)
		require.NoError(t, err)
		_, err = f.tokens.CreateToken(ctx, p, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"workflow/read"}})
		assert.True(t, apperr.HasReason(err, apperr.Unauthenticated), "%v", err)
	})
}

func TestTokensActWithinTheirCreatorsRightsNow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// creator is the owner as they are at the time of use.
		creator auth.Principal
		// grants says what the token may do in its team now.
		grants func(resource, action string) bool
	}{
		{"still owner", tokOwner, func(string, string) bool { return true }},
		{"demoted to editor", auth.Principal{Type: auth.TypeUser, ID: tokOwnerID, Teams: map[string]string{"infra": auth.RoleEditor}},
			func(_, act string) bool { return act != "delete" }},
		{"demoted to reader", auth.Principal{Type: auth.TypeUser, ID: tokOwnerID, Teams: map[string]string{"infra": auth.RoleReader}},
			func(_, act string) bool { return act == "read" }},
		{"left the team", auth.Principal{Type: auth.TypeUser, ID: tokOwnerID}, func(string, string) bool { return false }},
		{"made admin, not in the team", auth.Principal{Type: auth.TypeUser, ID: tokOwnerID, Roles: []string{auth.RoleAdmin}},
			func(string, string) bool { return true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newTokenFixture(t)
			tok := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}})
			f.tokens.users = tokMemUsers{tokOwnerID: tt.creator}
			p := f.principalOf(t, tok)
			for _, res := range auth.Resources {
				for _, act := range auth.Actions {
					assert.Equal(t, tt.grants(res, act), p.Can(auth.TeamScope("infra"), res, act), "%s/%s", res, act)
				}
			}
		})
	}
}

// Whatever credential acts, the person answerable for it travels with the principal: the
// user behind a user token, the user at the root of the chain of tokens that made a team,
// workflow or global token, and nobody for tokens no person made.
func TestTokensAnswerForThePersonAtTheirRoot(t *testing.T) {
	t.Parallel()
	f := newTokenFixture(t)
	userTok := f.mint(t, tokOwner, domain.TokenRequest{Type: "user"})
	teamTok := f.mint(t, tokOwner, domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{"**/**"}})
	wfByTeamTok := f.mint(t, f.principalOf(t, teamTok), domain.TokenRequest{Type: "workflow", Principal: "infra/build",
		Permissions: []string{"workflowrun/write"}})
	wfDeeper := f.mint(t, f.principalOf(t, f.mint(t, f.principalOf(t, teamTok), domain.TokenRequest{Type: "team",
		Principal: "infra", Permissions: []string{"token/write", "workflowrun/write"}})),
		domain.TokenRequest{Type: "workflow", Principal: "infra/build", Permissions: []string{"workflowrun/write"}})
	teamByUserTok := f.mint(t, f.principalOf(t, userTok), domain.TokenRequest{Type: "team", Principal: "infra",
		Permissions: []string{"workflow/read"}})
	edByAdmin := f.mint(t, tokAdmin, domain.TokenRequest{Type: "user", Principal: tokEditorID})
	teamByEdTok := f.mint(t, f.principalOf(t, edByAdmin), domain.TokenRequest{Type: "team", Principal: "infra",
		Permissions: []string{"workflow/read"}})
	globalByAdmin := f.mint(t, tokAdmin, domain.TokenRequest{Type: "global", Permissions: []string{"insights/read"}})
	globalByBootstrap := f.mint(t, tokBootstrap, domain.TokenRequest{Type: "global", Permissions: []string{"token/write", "workflow/read"}})
	teamByBootstrapToken := f.mint(t, f.principalOf(t, globalByBootstrap), domain.TokenRequest{Type: "team", Principal: "infra",
		Permissions: []string{"workflow/read"}})

	tests := []struct {
		name string
		give CreatedToken
		want string
	}{
		{"a user token: its user", userTok, tokOwnerID},
		{"a team token a user made: that user", teamTok, tokOwnerID},
		{"a workflow token a team token made: the user who made the team token", wfByTeamTok, tokOwnerID},
		{"three tokens down: the user at the root", wfDeeper, tokOwnerID},
		{"a team token made through a user token: its user", teamByUserTok, tokOwnerID},
		{"a user token an admin made: its user, not the admin", edByAdmin, tokEditorID},
		{"a team token made through it: that user", teamByEdTok, tokEditorID},
		{"a global token an admin made: the admin", globalByAdmin, tokAdminID},
		{"a global token the bootstrap admin made: nobody", globalByBootstrap, ""},
		{"a token made by a token nobody made: nobody", teamByBootstrapToken, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, f.principalOf(t, tt.give).Person)
		})
	}
}
