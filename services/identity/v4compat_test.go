package identity_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/identity"
)

// Global parameters written by a v4 client (`key`, `defaultValue`) are kept, and read
// back under both names; a secret default stays masked under both.
func TestGlobalParameterV4Aliases(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	for _, body := range []string{
		`{"key":"region","type":"text","defaultValue":"eu"}`,
		`{"key":"apiKey","type":"password","defaultValue":"s3cret-default"}`,
	} {
		code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", body)
		require.Equal(t, http.StatusCreated, code, raw)
	}
	code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", `{"name":"x","key":"y"}`)
	assert.Equal(t, http.StatusBadRequest, code, raw)

	code, raw = f.do(t, &sysUser, http.MethodGet, "/api/v2/parameters", "")
	require.Equal(t, http.StatusOK, code, raw)
	assert.NotContains(t, raw, "s3cret-default")
	var list []map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &list))
	byName := map[string]map[string]any{}
	for _, p := range list {
		byName[p["name"].(string)] = p
	}
	tests := []struct {
		name, wantDefault string
	}{
		{"region", "eu"},
		{"apiKey", "********"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := byName[tt.name]
			require.NotNil(t, p, "%s in %v", tt.name, list)
			assert.Equal(t, tt.name, p["key"])
			assert.Equal(t, tt.name, p["label"], "a label left out reads as the name")
			assert.Equal(t, tt.wantDefault, p["default"])
			assert.Equal(t, tt.wantDefault, p["defaultValue"])
		})
	}
}

// Team parameters accept and answer v4's names the same way.
func TestTeamParameterV4Aliases(t *testing.T) {
	t.Parallel()
	w := newTeamWorld(t)
	code, team := sendAs(t, w.f, w.editor, http.MethodPatch, "/api/v2/team/infra", `{"parameters":[
		{"key":"region","type":"text","defaultValue":"eu-west-1","label":"Region"},
		{"key":"db","type":"password","defaultValue":"d3fault"}]}`)
	require.Equal(t, http.StatusOK, code, team)
	for _, got := range []map[string]any{team, w.team(t)} {
		params := map[string]map[string]any{}
		for _, p := range got["parameters"].([]any) {
			params[p.(map[string]any)["name"].(string)] = p.(map[string]any)
		}
		assert.Equal(t, "region", params["region"]["key"])
		assert.Equal(t, "Region", params["region"]["label"])
		assert.Equal(t, "eu-west-1", params["region"]["default"])
		assert.Equal(t, "eu-west-1", params["region"]["defaultValue"])
		assert.Equal(t, "db", params["db"]["label"])
		assert.Equal(t, "********", params["db"]["default"])
		assert.Equal(t, "********", params["db"]["defaultValue"])
	}
	code, out := sendAs(t, w.f, w.editor, http.MethodPatch, "/api/v2/team/infra",
		`{"parameters":[{"name":"a","default":"x","defaultValue":"y"}]}`)
	assert.Equal(t, http.StatusBadRequest, code, out)
}
