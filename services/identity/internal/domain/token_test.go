package domain_test

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func TestNewSecret(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ        domain.TokenType
		wantPrefix string
	}{
		{domain.TokenGlobal, "btg_"},
		{domain.TokenTeam, "btt_"},
		{domain.TokenWorkflow, "btw_"},
		{domain.TokenUser, "btu_"},
		{domain.TokenSession, "bts_"},
	}
	for _, tt := range tests {
		t.Run(string(tt.typ), func(t *testing.T) {
			t.Parallel()
			s, err := domain.NewSecret(tt.typ, rand.Reader)
			require.NoError(t, err)
			assert.True(t, strings.HasPrefix(s, tt.wantPrefix), s)
			assert.Len(t, s, 4+43)
			got, ok := domain.SecretType(s)
			assert.True(t, ok)
			assert.Equal(t, tt.typ, got)
		})
	}

	t.Run("fixed width and deterministic for given randomness", func(t *testing.T) {
		t.Parallel()
		zeros, err := domain.NewSecret(domain.TokenTeam, bytes.NewReader(make([]byte, 32)))
		require.NoError(t, err)
		assert.Equal(t, "btt_"+strings.Repeat("0", 43), zeros)
		ones, err := domain.NewSecret(domain.TokenTeam, bytes.NewReader(bytes.Repeat([]byte{0xff}, 32)))
		require.NoError(t, err)
		assert.Len(t, ones, 47, "2^256-1 still fits 43 digits")
	})

	t.Run("distinct", func(t *testing.T) {
		t.Parallel()
		seen := map[string]bool{}
		for range 1000 {
			s, err := domain.NewSecret(domain.TokenUser, rand.Reader)
			require.NoError(t, err)
			require.False(t, seen[s])
			seen[s] = true
		}
	})

	t.Run("failing randomness", func(t *testing.T) {
		t.Parallel()
		_, err := domain.NewSecret(domain.TokenTeam, bytes.NewReader([]byte{1, 2, 3}))
		assert.Error(t, err)
	})
}

func TestSecretType(t *testing.T) {
	t.Parallel()
	valid := "btt_" + strings.Repeat("a", 43)
	tests := []struct {
		give   string
		wantOK bool
	}{
		{valid, true},
		{"", false},
		{"btt_", false},
		{"btx_" + strings.Repeat("a", 43), false},
		{"btt_" + strings.Repeat("a", 42), false},
		{"btt_" + strings.Repeat("a", 44), false},
		{"btt_" + strings.Repeat("a", 42) + "!", false},
		{"Bearer " + valid, false},
		{valid + "\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			_, ok := domain.SecretType(tt.give)
			assert.Equal(t, tt.wantOK, ok)
		})
	}
}

func TestHashSecret(t *testing.T) {
	t.Parallel()
	// The SHA-256 of "abc" (FIPS 180-2 test vector).
	assert.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", domain.HashSecret("abc"))
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	later := now.Add(time.Hour)
	earlier := now.Add(-time.Second)
	tests := []struct {
		name       string
		give       domain.TokenRequest
		want       domain.Token
		wantReason apperr.Reason
	}{
		{
			name: "team token",
			give: domain.TokenRequest{Type: "team", Name: " ci ", Principal: "infra", Permissions: []string{"workflow/read", " workflow/read", "workflowrun/write"}},
			want: domain.Token{Type: "team", Name: "ci", Principal: "infra", Team: "infra", Permissions: []string{"workflow/read", "workflowrun/write"}, CreationDate: now},
		},
		{
			name: "workflow token",
			give: domain.TokenRequest{Type: "workflow", Principal: "infra/build", ExpirationDate: &later, Permissions: []string{"workflowrun/write"}},
			want: domain.Token{Type: "workflow", Principal: "infra/build", Team: "infra", Workflow: "build", Permissions: []string{"workflowrun/write"}, CreationDate: now, ExpirationDate: &later},
		},
		{
			name: "workflow token for a workflow's id",
			give: domain.TokenRequest{Type: "workflow", Principal: workflowid.Of("infra", "build"), Permissions: []string{"workflowrun/write"}},
			want: domain.Token{Type: "workflow", Principal: "infra/build", Team: "infra", Workflow: "build", Permissions: []string{"workflowrun/write"}, CreationDate: now},
		},
		{name: "workflow token for a template's id", give: domain.TokenRequest{Type: "workflow", Principal: workflowid.Of("", "build"), Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{
			name: "global token ignores a principal",
			give: domain.TokenRequest{Type: "global", Principal: "whatever", Permissions: []string{"**/read"}},
			want: domain.Token{Type: "global", Permissions: []string{"**/read"}, CreationDate: now},
		},
		{
			name: "user token without permissions",
			give: domain.TokenRequest{Type: "user", Principal: "65A1B2C3D4E5F60718293A4B"},
			want: domain.Token{Type: "user", Principal: "65a1b2c3d4e5f60718293a4b", UserID: "65a1b2c3d4e5f60718293a4b", CreationDate: now},
		},
		{name: "session", give: domain.TokenRequest{Type: "session"}, wantReason: apperr.TokenInvalidSessionReq},
		{name: "unknown type", give: domain.TokenRequest{Type: "robot", Permissions: []string{"**/**"}}, wantReason: apperr.TokenInvalidReq},
		{name: "no type", give: domain.TokenRequest{Permissions: []string{"**/**"}}, wantReason: apperr.TokenInvalidReq},
		{name: "team token without team", give: domain.TokenRequest{Type: "team", Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "team name not a slug", give: domain.TokenRequest{Type: "team", Principal: "Infra Team", Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "workflow without team", give: domain.TokenRequest{Type: "workflow", Principal: "build", Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "workflow with three parts", give: domain.TokenRequest{Type: "workflow", Principal: "a/b/c", Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "user not an id", give: domain.TokenRequest{Type: "user", Principal: "alice"}, wantReason: apperr.TokenInvalidReq},
		{name: "no permissions", give: domain.TokenRequest{Type: "team", Principal: "infra", Permissions: []string{" "}}, wantReason: apperr.TokenInvalidReq},
		{name: "expired already", give: domain.TokenRequest{Type: "team", Principal: "infra", ExpirationDate: &earlier, Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "expiring now", give: domain.TokenRequest{Type: "team", Principal: "infra", ExpirationDate: &now, Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
		{name: "long name", give: domain.TokenRequest{Type: "team", Principal: "infra", Name: strings.Repeat("n", 129), Permissions: []string{"**/read"}}, wantReason: apperr.TokenInvalidReq},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.NewToken(tt.give, now)
			if tt.wantReason != (apperr.Reason{}) {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestTokenValidity(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	tests := []struct {
		name string
		give domain.Token
		want bool
	}{
		{"no expiry", domain.Token{}, true},
		{"expires later", domain.Token{ExpirationDate: &future}, true},
		{"expired", domain.Token{ExpirationDate: &past}, false},
		{"expires this instant", domain.Token{ExpirationDate: &now}, false},
		{"revoked", domain.Token{RevokedDate: &past}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.give.Valid(now))
		})
	}
}

func TestTokenAudience(t *testing.T) {
	t.Parallel()
	teamToken := domain.Token{Type: "team", Team: "infra", Creator: "token:t1"}
	userToken := domain.Token{Type: "user", UserID: "u1", Creator: "user:admin"}
	tests := []struct {
		name string
		give domain.TokenAudience
		tok  domain.Token
		want bool
	}{
		{"admin", domain.TokenAudience{All: true}, teamToken, true},
		{"creator", domain.TokenAudience{Creator: "token:t1"}, teamToken, true},
		{"team owner", domain.TokenAudience{Teams: []string{"ops", "infra"}}, teamToken, true},
		{"other team", domain.TokenAudience{Teams: []string{"ops"}}, teamToken, false},
		{"its user", domain.TokenAudience{UserID: "u1"}, userToken, true},
		{"another user", domain.TokenAudience{UserID: "u2", Creator: "user:u2"}, userToken, false},
		{"nobody", domain.TokenAudience{}, teamToken, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, tt.give.Sees(tt.tok))
		})
	}
}

func TestTokenMadeWithAParent(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	tests := []struct {
		name          string
		parent        domain.Token
		childExpiry   *time.Time
		wantExpiry    *time.Time
		wantAncestors []string
		wantCreator   string
	}{
		{name: "a person's token, no expiries", parent: domain.Token{Hash: "p", CreatorUserID: "u1"},
			wantAncestors: []string{"p"}, wantCreator: "u1"},
		{name: "the parent's expiry when the child asks none", parent: domain.Token{Hash: "p", ExpirationDate: at(time.Hour)},
			wantExpiry: at(time.Hour), wantAncestors: []string{"p"}},
		{name: "the parent's expiry when the child asks later", parent: domain.Token{Hash: "p", ExpirationDate: at(time.Hour)},
			childExpiry: at(2 * time.Hour), wantExpiry: at(time.Hour), wantAncestors: []string{"p"}},
		{name: "the child's expiry when earlier", parent: domain.Token{Hash: "p", ExpirationDate: at(time.Hour)},
			childExpiry: at(time.Minute), wantExpiry: at(time.Minute), wantAncestors: []string{"p"}},
		{name: "a grandchild lists both", parent: domain.Token{Hash: "c", Ancestors: []string{"p"}, CreatorUserID: "u1"},
			wantAncestors: []string{"p", "c"}, wantCreator: "u1"},
		{name: "a parent stored before creators were recorded", parent: domain.Token{Hash: "p", Creator: "user:u2"},
			wantAncestors: []string{"p"}, wantCreator: "u2"},
		{name: "a parent made by a token names no person by its creator key", parent: domain.Token{Hash: "c", Creator: "token:x", Ancestors: []string{"x"}},
			wantAncestors: []string{"x", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			child := domain.Token{ExpirationDate: tt.childExpiry}
			child.MadeWith(tt.parent)
			assert.Equal(t, tt.wantExpiry, child.ExpirationDate)
			assert.Equal(t, tt.wantAncestors, child.Ancestors)
			assert.Equal(t, tt.wantCreator, child.CreatorUser())
		})
	}
}
