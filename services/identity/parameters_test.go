package identity_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity"
)

// storedParamValue reads a parameter's value straight from the database: JSON text.
func (f *sysFixture) storedParamValue(t *testing.T, name string) string {
	t.Helper()
	var doc struct {
		Value string `bson:"value"`
	}
	require.NoError(t, f.db.Collection("parameters").FindOne(context.Background(), bson.M{"_id": name}).Decode(&doc))
	return doc.Value
}

// storedSecret opens a password parameter's stored value.
func (f *sysFixture) storedSecret(t *testing.T, name string) string {
	t.Helper()
	var sealed string
	require.NoError(t, json.Unmarshal([]byte(f.storedParamValue(t, name)), &sealed))
	require.True(t, secrets.IsSealed(sealed), "password values are sealed at rest: %q", sealed)
	return f.open(t, sealed)
}

func TestGlobalParametersLifecycle(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})

	code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters",
		`{"name": "region", "label": "Region", "type": "select", "value": "eu", "options": [{"key": "eu", "value": "Europe"}, {"key": "us", "value": "US"}]}`)
	require.Equal(t, http.StatusCreated, code, raw)
	var created map[string]any
	require.NoError(t, json.Unmarshal([]byte(raw), &created))
	assert.Equal(t, "region", created["name"])
	assert.Equal(t, "eu", created["value"])
	assert.Equal(t, "select", created["type"])

	code, raw = f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", `{"name": "region", "value": "us"}`)
	require.Equal(t, http.StatusConflict, code, raw)
	assert.Equal(t, "PARAMS_NON_UNIQUE_REFERENCE", reasonOf(t, raw))

	code, raw = f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters",
		`{"name": "deployKey", "type": "password", "value": "s3cret-value", "description": "for deploys"}`)
	require.Equal(t, http.StatusCreated, code, raw)
	assert.NotContains(t, raw, "s3cret-value")
	assert.Contains(t, raw, `"value":"********"`)
	assert.Equal(t, "s3cret-value", f.storedSecret(t, "deployKey"))

	code, raw = f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", `{"name": "big", "type": "number", "value": 12345678901234567890}`)
	require.Equal(t, http.StatusCreated, code, raw)
	assert.Contains(t, raw, `"value":12345678901234567890`, "numbers keep their precision")

	// Everyone authenticated reads, ordered by name, with secrets masked.
	for _, who := range []auth.Principal{sysAdmin, sysUser, sysTeamToken} {
		code, raw = f.do(t, &who, http.MethodGet, "/api/v2/parameters", "")
		require.Equal(t, http.StatusOK, code, raw)
		assert.NotContains(t, raw, "s3cret-value")
		assert.NotContains(t, raw, "enc:v1")
		var list []map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &list))
		require.Len(t, list, 3)
		assert.Equal(t, []any{"big", "deployKey", "region"}, []any{list[0]["name"], list[1]["name"], list[2]["name"]})
		assert.Equal(t, secrets.Mask, list[1]["value"])
	}

	// A replacement that omits the secret or sends the mask keeps it; a new one replaces it.
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/parameters", `{"name": "deployKey", "type": "password", "label": "Deploy key"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Contains(t, raw, `"label":"Deploy key"`)
	assert.Contains(t, raw, `"value":"********"`)
	assert.NotContains(t, raw, "description", "PUT replaces the whole parameter")
	assert.Equal(t, "s3cret-value", f.storedSecret(t, "deployKey"))
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/parameters", `{"name": "deployKey", "type": "password", "value": "********"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Equal(t, "s3cret-value", f.storedSecret(t, "deployKey"))
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/parameters", `{"name": "deployKey", "type": "password", "value": "n3w-secret"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.NotContains(t, raw, "n3w-secret")
	assert.Equal(t, "n3w-secret", f.storedSecret(t, "deployKey"))

	// Turned into plain text, the old secret is not carried over, nor the mask kept as a value.
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/parameters", `{"name": "deployKey", "type": "text", "value": "********"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.NotContains(t, raw, `"value"`)
	assert.NotContains(t, raw, "n3w-secret")
	assert.Equal(t, "", f.storedParamValue(t, "deployKey"))

	// PUT of an unknown name creates it.
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/parameters", `{"name": "fresh", "value": "x"}`)
	require.Equal(t, http.StatusCreated, code, raw)
	assert.Contains(t, raw, `"type":"text"`)

	code, _ = f.do(t, &sysAdmin, http.MethodDelete, "/api/v2/parameters/fresh", "")
	assert.Equal(t, http.StatusNoContent, code)
	code, raw = f.do(t, &sysAdmin, http.MethodDelete, "/api/v2/parameters/fresh", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "PARAMS_NOT_FOUND", reasonOf(t, raw))
}

func TestGlobalParametersOnlyAdminsWrite(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", `{"name": "kept", "value": "1"}`)
	require.Equal(t, http.StatusCreated, code, raw)

	writer := auth.Principal{Type: auth.TypeGlobal, ID: "64b0000000000000000000cc", TokenID: "64b0000000000000000000cc",
		Permissions: []string{"parameter/write"}}
	tests := []struct {
		name     string
		who      auth.Principal
		method   string
		path     string
		body     string
		wantCode int
	}{
		{"user may not create", sysUser, http.MethodPost, "/api/v2/parameters", `{"name": "x"}`, http.StatusForbidden},
		{"user may not replace", sysUser, http.MethodPut, "/api/v2/parameters", `{"name": "kept"}`, http.StatusForbidden},
		{"user may not delete", sysUser, http.MethodDelete, "/api/v2/parameters/kept", "", http.StatusForbidden},
		{"team token may not create", sysTeamToken, http.MethodPost, "/api/v2/parameters", `{"name": "x"}`, http.StatusForbidden},
		{"team token may not delete", sysTeamToken, http.MethodDelete, "/api/v2/parameters/kept", "", http.StatusForbidden},
		{"global token with parameter/write creates", writer, http.MethodPost, "/api/v2/parameters", `{"name": "byToken"}`, http.StatusCreated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, &tt.who, tt.method, tt.path, tt.body)
			require.Equal(t, tt.wantCode, code, raw)
			if code == http.StatusForbidden {
				assert.Equal(t, "PERMISSION_DENIED", reasonOf(t, raw))
			}
		})
	}
	code, raw = f.do(t, &sysUser, http.MethodGet, "/api/v2/parameters", "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, raw, `"name":"kept"`)
	anon := auth.Anonymous
	code, _ = f.do(t, &anon, http.MethodGet, "/api/v2/parameters", "")
	assert.Equal(t, http.StatusUnauthorized, code)
}

func TestGlobalParametersValidation(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	tests := []struct {
		name       string
		give       string
		wantCode   int
		wantReason string
		wantField  string
	}{
		{"no name", `{"value": "x"}`, 400, "REQUEST_INVALID", "name"},
		{"name with a space", `{"name": "my param"}`, 400, "REQUEST_INVALID", "name"},
		{"name too long", `{"name": "` + strings.Repeat("a", 65) + `"}`, 400, "REQUEST_INVALID", "name"},
		{"unknown type", `{"name": "p1", "type": "colour"}`, 400, "REQUEST_INVALID", "type"},
		{"number that is not", `{"name": "p2", "type": "number", "value": "ten"}`, 400, "REQUEST_INVALID", "value"},
		{"boolean that is not", `{"name": "p3", "type": "boolean", "default": "yes"}`, 400, "REQUEST_INVALID", "default"},
		{"email that is not", `{"name": "p4", "type": "email", "value": "nobody"}`, 400, "REQUEST_INVALID", "value"},
		{"relative url", `{"name": "p5", "type": "url", "value": "/x"}`, 400, "REQUEST_INVALID", "value"},
		{"select outside its options", `{"name": "p6", "type": "select", "value": "c", "options": [{"key": "a", "value": "A"}]}`, 400, "REQUEST_INVALID", "value"},
		{"password not a string", `{"name": "p7", "type": "password", "value": {"a": 1}}`, 400, "REQUEST_INVALID", "value"},
		{"too short", `{"name": "p8", "value": "ab", "minValueLength": 3}`, 400, "REQUEST_INVALID", "value"},
		{"min above max", `{"name": "p9", "minValueLength": 3, "maxValueLength": 2}`, 400, "REQUEST_INVALID", "minValueLength"},
		{"duplicate options", `{"name": "pa", "type": "select", "options": [{"key": "a"}, {"key": "a"}]}`, 400, "REQUEST_INVALID", "options[1].key"},
		{"not JSON", `{"name": `, 400, "REQUEST_INVALID", ""},
		{"boolean from text", `{"name": "okBool", "type": "boolean", "value": "TRUE"}`, 201, "", ""},
		{"number from text", `{"name": "okNumber", "type": "number", "value": "1.5"}`, 201, "", ""},
		{"multiselect from a comma list", `{"name": "okMulti", "type": "multiselect", "value": "a,b", "options": [{"key": "a"}, {"key": "b"}]}`, 201, "", ""},
		{"json object", `{"name": "okJSON", "type": "json", "value": {"a": [1, 2]}}`, 201, "", ""},
		{"v4 spellings", `{"name": "okV4", "defaultValue": "d", "helperText": "h"}`, 201, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", tt.give)
			require.Equal(t, tt.wantCode, code, raw)
			if tt.wantReason == "" {
				return
			}
			var body struct {
				Reason string `json:"reason"`
				Errors []struct {
					Field string `json:"field"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(raw), &body))
			assert.Equal(t, tt.wantReason, body.Reason)
			if tt.wantField != "" {
				require.NotEmpty(t, body.Errors, raw)
				assert.Equal(t, tt.wantField, body.Errors[0].Field)
			}
		})
	}

	_, list := sysCall[[]map[string]any](t, f, sysAdmin, http.MethodGet, "/api/v2/parameters", "")
	got := map[string]map[string]any{}
	for _, p := range list {
		got[p["name"].(string)] = p
	}
	assert.Equal(t, true, got["okBool"]["value"])
	assert.Equal(t, 1.5, got["okNumber"]["value"])
	assert.Equal(t, []any{"a", "b"}, got["okMulti"]["value"])
	assert.Equal(t, map[string]any{"a": []any{1.0, 2.0}}, got["okJSON"]["value"])
	assert.Equal(t, "d", got["okV4"]["default"])
	assert.Equal(t, "h", got["okV4"]["helpertext"])
}
