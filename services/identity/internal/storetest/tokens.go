package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// newToken is a token of type typ with every field set; its hash is derived from n.
func newToken(n int, typ domain.TokenType, name string) domain.Token {
	expires := at.Add(30 * 24 * time.Hour)
	t := domain.Token{
		ID: id(n), Hash: domain.HashSecret("secret-" + id(n)), Type: typ, Name: name, Description: "made for " + name,
		Permissions: []string{"workflow/read", "run/write"}, CreationDate: at.Add(time.Duration(n) * time.Minute),
		ExpirationDate: &expires, CreatedBy: id(500), Creator: "user:" + id(500), CreatorUserID: id(500),
	}
	switch typ {
	case domain.TokenTeam:
		t.Team, t.TeamID, t.Principal = "alpha", id(1), "alpha"
	case domain.TokenWorkflow:
		t.Team, t.TeamID, t.Workflow, t.Principal = "alpha", id(1), "build", "alpha/build"
	case domain.TokenUser, domain.TokenSession:
		t.UserID, t.Principal = id(500), id(500)
	}
	return t
}

func createAndFindTokens(t *testing.T, s Stores) {
	ctx := context.Background()
	tok := newToken(1, domain.TokenWorkflow, "ci")
	tok.Ancestors = []string{domain.HashSecret("parent")}
	require.NoError(t, s.Tokens.CreateToken(ctx, tok))

	got, err := s.Tokens.FindTokenByHash(ctx, tok.Hash)
	require.NoError(t, err)
	assert.Equal(t, tok, got)
	got, err = s.Tokens.FindTokenByID(ctx, tok.ID)
	require.NoError(t, err)
	assert.Equal(t, tok, got)

	_, err = s.Tokens.FindTokenByHash(ctx, domain.HashSecret("unknown"))
	assert.ErrorIs(t, err, domain.ErrTokenNotFound)
	_, err = s.Tokens.FindTokenByID(ctx, id(9))
	assert.ErrorIs(t, err, domain.ErrTokenNotFound)

	other := newToken(2, domain.TokenGlobal, "admin")
	require.NoError(t, s.Tokens.CreateToken(ctx, other))
	found, err := s.Tokens.FindTokensByHashes(ctx, []string{other.Hash, domain.HashSecret("unknown"), tok.Hash})
	require.NoError(t, err)
	var ids []string
	for _, f := range found {
		ids = append(ids, f.ID)
	}
	assert.ElementsMatch(t, []string{tok.ID, other.ID}, ids)
	none, err := s.Tokens.FindTokensByHashes(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, none)

	// Whatever expiry a client asks for is kept, past the year 9999 too.
	far := newToken(3, domain.TokenGlobal, "far")
	farAway := time.Date(292000, 1, 1, 0, 0, 0, 0, time.UTC)
	far.ExpirationDate = &farAway
	require.NoError(t, s.Tokens.CreateToken(ctx, far))
	got, err = s.Tokens.FindTokenByHash(ctx, far.Hash)
	require.NoError(t, err)
	assert.Equal(t, far, got)
}

func tokenSearches(t *testing.T, s Stores) {
	ctx := context.Background()
	tokens := []domain.Token{
		newToken(1, domain.TokenGlobal, "g"),
		newToken(2, domain.TokenTeam, "t"),
		newToken(3, domain.TokenWorkflow, "w"),
		newToken(4, domain.TokenUser, "u"),
		newToken(5, domain.TokenSession, "s"),
	}
	tokens[0].Creator, tokens[0].CreatorUserID = "user:"+id(600), id(600)
	tokens[1].Team, tokens[1].Principal = "bravo", "bravo"
	for _, tok := range tokens {
		require.NoError(t, s.Tokens.CreateToken(ctx, tok))
	}
	from, to := at.Add(2*time.Minute), at.Add(4*time.Minute)
	names := func(tokens []domain.Token) []string {
		out := []string{}
		for _, t := range tokens {
			out = append(out, t.Name)
		}
		return out
	}
	tests := []struct {
		name  string
		f     domain.TokenFilter
		p     page.Request
		want  []string
		total int64
	}{
		{"all, oldest first", domain.TokenFilter{Audience: domain.TokenAudience{All: true}}, page.Request{Size: 10}, []string{"g", "t", "w", "u", "s"}, 5},
		{"all, newest first, paged", domain.TokenFilter{Audience: domain.TokenAudience{All: true}}, page.Request{Number: 1, Size: 2, Desc: true}, []string{"w", "t"}, 5},
		{"by name", domain.TokenFilter{Audience: domain.TokenAudience{All: true}}, page.Request{Size: 10, Sort: "name"}, []string{"g", "s", "t", "u", "w"}, 5},
		{"no audience sees nothing", domain.TokenFilter{}, page.Request{Size: 10}, []string{}, 0},
		{"creator", domain.TokenFilter{Audience: domain.TokenAudience{Creator: "user:" + id(600)}}, page.Request{Size: 10}, []string{"g"}, 1},
		{"user", domain.TokenFilter{Audience: domain.TokenAudience{UserID: id(500)}}, page.Request{Size: 10}, []string{"u", "s"}, 2},
		{"teams", domain.TokenFilter{Audience: domain.TokenAudience{Teams: []string{"alpha"}}}, page.Request{Size: 10}, []string{"w"}, 1},
		{"any of an audience", domain.TokenFilter{Audience: domain.TokenAudience{Creator: "user:" + id(600), Teams: []string{"alpha", "bravo"}}}, page.Request{Size: 10}, []string{"g", "t", "w"}, 3},
		{"types", domain.TokenFilter{Audience: domain.TokenAudience{All: true}, Types: []domain.TokenType{domain.TokenUser, domain.TokenGlobal}}, page.Request{Size: 10}, []string{"g", "u"}, 2},
		{"principals", domain.TokenFilter{Audience: domain.TokenAudience{All: true}, Principals: []string{"alpha/build", "bravo"}}, page.Request{Size: 10}, []string{"t", "w"}, 2},
		{"creation range, inclusive", domain.TokenFilter{Audience: domain.TokenAudience{All: true}, From: &from, To: &to}, page.Request{Size: 10}, []string{"t", "w", "u"}, 3},
	}
	for _, tt := range tests {
		got, total, err := s.Tokens.FindTokens(ctx, tt.f, tt.p)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, names(got), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
}

func revokeTokens(t *testing.T, s Stores) {
	ctx := context.Background()
	root := newToken(1, domain.TokenUser, "root")
	child := newToken(2, domain.TokenGlobal, "child")
	child.Ancestors = []string{root.Hash}
	grandchild := newToken(3, domain.TokenGlobal, "grandchild")
	grandchild.Ancestors = []string{root.Hash, child.Hash}
	early := at.Add(-time.Hour)
	stranger := newToken(4, domain.TokenGlobal, "stranger")
	revokedBefore := newToken(5, domain.TokenGlobal, "revoked before")
	revokedBefore.Ancestors = []string{root.Hash}
	revokedBefore.RevokedDate = &early
	for _, tok := range []domain.Token{root, child, grandchild, stranger, revokedBefore} {
		require.NoError(t, s.Tokens.CreateToken(ctx, tok))
	}

	when := at.Add(time.Hour)
	got, err := s.Tokens.RevokeToken(ctx, child.ID, when)
	require.NoError(t, err)
	require.NotNil(t, got.RevokedDate)
	assert.Equal(t, when, *got.RevokedDate)

	revokedAt := func(tok domain.Token) *time.Time {
		got, err := s.Tokens.FindTokenByID(ctx, tok.ID)
		require.NoError(t, err)
		return got.RevokedDate
	}
	assert.Nil(t, revokedAt(root), "an ancestor is not revoked")
	assert.Equal(t, &when, revokedAt(grandchild))
	assert.Nil(t, revokedAt(stranger))

	// The first revocation's date stays.
	later := when.Add(time.Hour)
	got, err = s.Tokens.RevokeToken(ctx, child.ID, later)
	require.NoError(t, err)
	assert.Equal(t, when, *got.RevokedDate)
	_, err = s.Tokens.RevokeToken(ctx, root.ID, later)
	require.NoError(t, err)
	assert.Equal(t, &later, revokedAt(root))
	assert.Equal(t, &when, revokedAt(grandchild))
	assert.Equal(t, &early, revokedAt(revokedBefore))

	_, err = s.Tokens.RevokeToken(ctx, id(9), later)
	assert.ErrorIs(t, err, domain.ErrTokenNotFound)
}

func revokeUserTokens(t *testing.T, s Stores) {
	ctx := context.Background()
	user := id(700)
	acting := newToken(1, domain.TokenSession, "session")
	acting.UserID, acting.Principal, acting.Creator, acting.CreatorUserID = user, user, "user:"+user, user
	made := newToken(2, domain.TokenTeam, "made")
	made.Creator, made.CreatorUserID = "user:"+user, user
	madeThrough := newToken(3, domain.TokenGlobal, "made through a token")
	madeThrough.Creator, madeThrough.CreatorUserID = "token:"+acting.ID, user
	legacy := newToken(4, domain.TokenGlobal, "legacy")
	legacy.Creator, legacy.CreatorUserID = "user:"+user, ""
	other := newToken(5, domain.TokenUser, "other")
	for _, tok := range []domain.Token{acting, made, madeThrough, legacy, other} {
		require.NoError(t, s.Tokens.CreateToken(ctx, tok))
	}
	require.NoError(t, s.Tokens.RevokeUserTokens(ctx, user, at))
	for _, tok := range []domain.Token{acting, made, madeThrough, legacy} {
		got, err := s.Tokens.FindTokenByID(ctx, tok.ID)
		require.NoError(t, err)
		assert.Equal(t, &at, got.RevokedDate, tok.Name)
	}
	got, err := s.Tokens.FindTokenByID(ctx, other.ID)
	require.NoError(t, err)
	assert.Nil(t, got.RevokedDate)
}

func touchToken(t *testing.T, s Stores) {
	ctx := context.Background()
	tok := newToken(1, domain.TokenGlobal, "g")
	require.NoError(t, s.Tokens.CreateToken(ctx, tok))
	used := at.Add(time.Minute)
	require.NoError(t, s.Tokens.TouchToken(ctx, tok.Hash, used))
	got, err := s.Tokens.FindTokenByHash(ctx, tok.Hash)
	require.NoError(t, err)
	assert.Equal(t, &used, got.LastUsed)
	tok.LastUsed = &used
	assert.Equal(t, tok, got, "the rest of the token is unchanged")
	require.NoError(t, s.Tokens.TouchToken(ctx, domain.HashSecret("unknown"), used))
}
