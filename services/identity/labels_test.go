package identity_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDottedLabelKeysAreKeptAndFound: teams and users take label keys with dots
// (`app.kubernetes.io/name`), which the store cannot hold as field names as given, answer
// them as sent and find them by them; keys outside the label-key rule are refused.
func TestDottedLabelKeysAreKeptAndFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, team := f.call(t, http.MethodPost, "/api/v2/team",
		`{"name":"dotted","labels":{"app.kubernetes.io/name":"baton","env":"prod"},"members":[{"email":"dot@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusCreated, code, team)
	assert.Equal(t, map[string]any{"app.kubernetes.io/name": "baton", "env": "prod"}, team["labels"])
	members, _ := team["members"].([]any)
	require.Len(t, members, 1, team)

	code, got := f.call(t, http.MethodGet, "/api/v2/team/dotted", "")
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, map[string]any{"app.kubernetes.io/name": "baton", "env": "prod"}, got["labels"])

	query := "/api/v2/team/query?labels=" + url.QueryEscape("app.kubernetes.io/name=baton")
	code, page := f.call(t, http.MethodGet, query, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 1, page["totalElements"], page)

	code, got = f.call(t, http.MethodPatch, "/api/v2/team/dotted", `{"labels":{"app.kubernetes.io/name":null,"a.b":"c"}}`)
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, map[string]any{"a.b": "c", "env": "prod"}, got["labels"])

	var userID string
	for _, m := range members {
		if m := m.(map[string]any); m["email"] == "dot@example.com" {
			userID, _ = m["id"].(string)
		}
	}
	require.NotEmpty(t, userID, members)
	code, _ = f.call(t, http.MethodPatch, "/api/v2/user/"+userID, `{"labels":{"example.com/owner":"me"}}`)
	require.Less(t, code, 300)
	code, user := f.call(t, http.MethodGet, "/api/v2/user/"+userID, "")
	require.Equal(t, http.StatusOK, code, user)
	assert.Equal(t, map[string]any{"example.com/owner": "me"}, user["labels"])
	code, page = f.call(t, http.MethodGet, "/api/v2/user/query?labels="+url.QueryEscape("example.com/owner=me"), "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 1, page["totalElements"], page)

	for _, bad := range []string{`{"$where":"1"}`, `{"a\u0001b":"1"}`, `{"a b":"1"}`, `{".a":"1"}`, `{"a..b/c":"1"}`} {
		code, body := f.call(t, http.MethodPatch, "/api/v2/team/dotted", `{"labels":`+bad+`}`)
		assert.Equal(t, http.StatusBadRequest, code, bad)
		assert.Equal(t, "TEAM_INVALID_REQ", body["reason"], bad)
		code, body = f.call(t, http.MethodPatch, "/api/v2/user/"+userID, `{"labels":`+bad+`}`)
		assert.Equal(t, http.StatusBadRequest, code, "%s %v", bad, body)
	}
}
