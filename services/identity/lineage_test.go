package identity_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// principalOf authenticates secret as the gateway does and returns its principal.
func principalOf(t *testing.T, f *fixture, secret string) (auth.Principal, tokenReply) {
	t.Helper()
	a := authenticate(t, f, secret)
	require.Equal(t, http.StatusOK, a.code, a.raw)
	var p auth.Principal
	require.NoError(t, json.Unmarshal([]byte(a.raw), &p))
	return p, a
}

// tokenValidity maps the ids of the tokens p sees to their `valid`.
func tokenValidity(t *testing.T, f *fixture, p auth.Principal) map[string]bool {
	t.Helper()
	r := tokenCall(t, f, &p, http.MethodGet, "/api/v2/token/query?limit=100", "")
	require.Equal(t, http.StatusOK, r.code, r.raw)
	out := map[string]bool{}
	for _, item := range r.body["content"].([]any) {
		tok := item.(map[string]any)
		out[tok["id"].(string)] = tok["valid"].(bool)
	}
	return out
}

func TestTokensMadeWithATokenAreRevokedWithIt(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	f := w.f
	owner := w.owner
	owner.Teams = map[string]string{"infra": auth.RoleOwner}

	hour := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	parentID, parentSecret := mintToken(t, f, owner, fmt.Sprintf(
		`{"type":"team","principal":"infra","permissions":["**/**"],"expirationDate":%q}`, hour.Format(time.RFC3339Nano)))
	parent, _ := principalOf(t, f, parentSecret)

	// The child asks to live a day: it gets its parent's hour.
	r := tokenCall(t, f, &parent, http.MethodPost, "/api/v2/token", fmt.Sprintf(
		`{"type":"team","principal":"infra","permissions":["token/write","workflow/read","workflowrun/read"],"expirationDate":%q}`,
		time.Now().Add(24*time.Hour).UTC().Format(time.RFC3339Nano)))
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	childID, childSecret := r.body["id"].(string), r.body["token"].(string)
	assert.Equal(t, hour.Format("2006-01-02T15:04:05.000Z07:00"), r.body["expirationDate"], "expires no later than its parent")
	child, a := principalOf(t, f, childSecret)
	exp, err := time.Parse(time.RFC3339Nano, a.header.Get("X-Baton-Token-Expires"))
	require.NoError(t, err)
	assert.True(t, exp.Equal(hour), "the gateway caches it no longer than its parent lives: %s", exp)

	// The grandchild, asking for no expiry, inherits the hour too.
	r = tokenCall(t, f, &child, http.MethodPost, "/api/v2/token", `{"type":"workflow","principal":"infra/build","permissions":["workflowrun/read"]}`)
	require.Equal(t, http.StatusCreated, r.code, r.raw)
	grandchildID, grandchildSecret := r.body["id"].(string), r.body["token"].(string)
	assert.NotEmpty(t, r.body["expirationDate"])
	principalOf(t, f, grandchildSecret)

	// A token the owner made alongside is no kin of the parent.
	siblingID, siblingSecret := mintToken(t, f, owner, `{"type":"team","principal":"infra","permissions":["workflow/read"]}`)

	r = tokenCall(t, f, &owner, http.MethodDelete, "/api/v2/token/"+parentID, "")
	require.Less(t, r.code, 300, r.raw)
	for name, secret := range map[string]string{"parent": parentSecret, "child": childSecret, "grandchild": grandchildSecret} {
		assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, secret).code, name)
	}
	principalOf(t, f, siblingSecret)
	valid := tokenValidity(t, f, owner)
	assert.Equal(t, map[string]bool{parentID: false, childID: false, grandchildID: false, siblingID: true}, valid)

	// A principal the gateway still holds for the revoked parent makes nothing more.
	r = tokenCall(t, f, &parent, http.MethodPost, "/api/v2/token", `{"type":"team","principal":"infra","permissions":["workflow/read"]}`)
	assert.Equal(t, http.StatusUnauthorized, r.code, r.raw)
}

func TestTokensLiveNoLongerThanThePersonWhoMadeThem(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	f := w.f
	owner, editor := w.owner, w.editor
	owner.Teams = map[string]string{"infra": auth.RoleOwner}
	editor.Teams = map[string]string{"infra": auth.RoleEditor}

	editorID, editorSecret := mintToken(t, f, editor, `{"type":"workflow","principal":"infra/build","permissions":["workflowrun/read","token/write"]}`)
	editorTok, _ := principalOf(t, f, editorSecret)
	grandID, grandSecret := mintToken(t, f, editorTok, `{"type":"workflow","principal":"infra/build","permissions":["workflowrun/read"]}`)
	ownerTokID, ownerSecret := mintToken(t, f, owner, `{"type":"team","principal":"infra","permissions":["**/**"]}`)

	// Deactivated: the editor's tokens stop, and start again when she is let back in.
	code, out := sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+editor.ID, `{"status":"inactive"}`)
	require.Equal(t, http.StatusNoContent, code, out)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, editorSecret).code)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, grandSecret).code, "a token made with her token")
	principalOf(t, f, ownerSecret)
	code, out = sendAs(t, f, admin, http.MethodPatch, "/api/v2/user/"+editor.ID, `{"status":"active"}`)
	require.Equal(t, http.StatusNoContent, code, out)
	principalOf(t, f, editorSecret)
	principalOf(t, f, grandSecret)

	// Demoting the owner narrows the token she made to what she holds now.
	code, out = sendAs(t, f, admin, http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"`+editor.ID+`","role":"owner"},{"id":"`+owner.ID+`","role":"reader"}]}`)
	require.Equal(t, http.StatusOK, code, out)
	p, _ := principalOf(t, f, ownerSecret)
	assert.True(t, p.Can(auth.TeamScope("infra"), "workflow", "read"))
	assert.False(t, p.Can(auth.TeamScope("infra"), "workflow", "write"), "a reader's token reads only: %v", p.Permissions)

	// Deleted: every token she made is revoked for good.
	code, out = sendAs(t, f, admin, http.MethodDelete, "/api/v2/user/"+editor.ID, "")
	require.Equal(t, http.StatusConflict, code, "the last owner: %v", out)
	code, out = sendAs(t, f, admin, http.MethodPatch, "/api/v2/team/infra", `{"members":[{"id":"`+owner.ID+`","role":"owner"}]}`)
	require.Equal(t, http.StatusOK, code, out)
	code, out = sendAs(t, f, admin, http.MethodDelete, "/api/v2/user/"+editor.ID, "")
	require.Equal(t, http.StatusNoContent, code, out)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, editorSecret).code)
	assert.Equal(t, http.StatusUnauthorized, authenticate(t, f, grandSecret).code)
	valid := tokenValidity(t, f, admin)
	assert.False(t, valid[editorID])
	assert.False(t, valid[grandID])
	assert.True(t, valid[ownerTokID])
	principalOf(t, f, ownerSecret)
}

// The principal identity answers for a token names the person answerable for it, so that
// rules about people (a run's initiator does not approve it) hold whichever credential
// they use: the user of a user token, the user at the root of a chain of tokens, nobody
// for tokens the bootstrap admin made.
func TestAuthenticatedTokensNameTheirPerson(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	f := w.f
	owner := w.owner
	owner.Teams = map[string]string{"infra": auth.RoleOwner}

	_, userSecret := mintToken(t, f, owner, `{"type":"user"}`)
	_, teamSecret := mintToken(t, f, owner, `{"type":"team","principal":"infra","permissions":["token/write","workflowrun/write"]}`)
	teamTok, _ := principalOf(t, f, teamSecret)
	_, workflowSecret := mintToken(t, f, teamTok, `{"type":"workflow","principal":"infra/build","permissions":["workflowrun/write"]}`)
	_, globalSecret := mintToken(t, f, admin, `{"type":"global","permissions":["workflow/read"]}`)

	tests := []struct {
		name   string
		secret string
		want   string
	}{
		{"a user token: its user", userSecret, owner.ID},
		{"a team token the owner made: the owner", teamSecret, owner.ID},
		{"a workflow token the team token made: the owner", workflowSecret, owner.ID},
		{"a global token the bootstrap admin made: nobody", globalSecret, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, a := principalOf(t, f, tt.secret)
			assert.Equal(t, tt.want, p.Person)
			if tt.want == "" {
				assert.NotContains(t, a.raw, `"person"`)
			}
		})
	}
}
