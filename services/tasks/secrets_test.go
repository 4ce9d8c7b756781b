package tasks_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/tasks"
	"github.com/baton-flow/baton/services/tasks/internal/mongostore"
)

// testSecretKey seals the fixtures' password parameters.
const testSecretKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

const (
	secretDefault = "hunter2-default"
	secretValue   = "hunter2-value"
)

const deployTask = `{"name":"deploy","changelog":{"reason":"first"},
 "spec":{"image":"alpine:3","script":"deploy",
  "params":[{"name":"token","type":"password","default":"` + secretDefault + `","value":"` + secretValue + `"},
   {"name":"env","type":"text","default":"prod"}]}}`

// param returns the named parameter of a task answered as JSON.
func param(t *testing.T, task map[string]any, name string) map[string]any {
	t.Helper()
	spec, ok := task["spec"].(map[string]any)
	require.True(t, ok, "task has a spec: %v", task)
	params, _ := spec["params"].([]any)
	for _, p := range params {
		if m := p.(map[string]any); m["name"] == name {
			return m
		}
	}
	require.Failf(t, "no such parameter", "%s in %v", name, params)
	return nil
}

// assertMasked checks an answered task shows the mask for the password parameter's
// default (under both names) and value, and the clear values nowhere.
func assertMasked(t *testing.T, task map[string]any) {
	t.Helper()
	p := param(t, task, "token")
	for _, k := range []string{"default", "defaultValue", "value"} {
		assert.Equal(t, secrets.Mask, p[k], "%s is masked", k)
	}
	assert.Equal(t, "prod", param(t, task, "env")["default"], "other parameters are shown")
	raw := fmt.Sprint(task)
	assert.NotContains(t, raw, secretDefault)
	assert.NotContains(t, raw, secretValue)
}

// resolved returns the password parameter as the internal endpoint answers Baton's services.
func (f *fixture) resolved(t *testing.T, query string) map[string]any {
	t.Helper()
	code, out := f.call(t, service, http.MethodGet, "/internal/v1/tasks/resolve?"+query, "")
	require.Equal(t, http.StatusOK, code, out)
	return param(t, out, "token")
}

// storedBodies returns every stored document of the task catalogue, heads and versions.
func (f *fixture) storedBodies(t *testing.T) string {
	t.Helper()
	var all strings.Builder
	if path, ok, err := tasks.SQLitePath(f.databaseURL); ok {
		// The service's own file and its write-ahead log, byte for byte.
		require.NoError(t, err)
		for _, file := range []string{path, path + "-wal"} {
			raw, err := os.ReadFile(file)
			if !errors.Is(err, fs.ErrNotExist) {
				require.NoError(t, err)
			}
			all.Write(raw)
		}
		return all.String()
	}
	for _, coll := range []string{mongostore.HeadsCollection, mongostore.VersionsCollection} {
		cur, err := f.db.Collection(coll).Find(t.Context(), bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(t.Context(), &docs))
		for _, d := range docs {
			fmt.Fprintln(&all, d)
		}
	}
	return all.String()
}

func TestPasswordParamsAreSealedMaskedAndKept(t *testing.T) {
	t.Parallel()
	passwordParamsAreSealedMaskedAndKept(t, newFixture(t))
}

func passwordParamsAreSealedMaskedAndKept(t *testing.T, f *fixture) {
	const path = "/api/v2/team/infra/task/deploy"

	code, created := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", deployTask)
	require.Equal(t, http.StatusCreated, code, created)
	assertMasked(t, created)

	// A write sending the mask back keeps the stored default and value.
	code, v2 := f.call(t, editor, http.MethodPut, path,
		`{"changelog":{"reason":"masked"},"spec":{"image":"alpine:3","script":"deploy v2","params":[
		 {"name":"token","type":"password","default":"********","defaultValue":"********","value":"********"},
		 {"name":"env","type":"text","default":"prod"}]}}`)
	require.Equal(t, http.StatusOK, code, v2)
	require.EqualValues(t, 2, v2["version"])
	assertMasked(t, v2)
	// One leaving them out keeps them too.
	code, v3 := f.call(t, editor, http.MethodPut, path,
		`{"changelog":{"reason":"omitted"},"spec":{"image":"alpine:3","script":"deploy v3","params":[
		 {"name":"token","type":"password"},{"name":"env","type":"text","default":"prod"}]}}`)
	require.Equal(t, http.StatusOK, code, v3)
	require.EqualValues(t, 3, v3["version"])
	assertMasked(t, v3)
	// Sent again, as read (masked) or leaving them out, it is the latest version: no new one.
	for _, body := range []string{mustJSON(t, v3), `{"spec":{"image":"alpine:3","script":"deploy v3","params":[
		 {"name":"token","type":"password"},{"name":"env","type":"text","default":"prod"}]}}`} {
		code, again := f.call(t, editor, http.MethodPut, path, body)
		require.Equal(t, http.StatusOK, code, again)
		assert.EqualValues(t, 3, again["version"], "the stored secrets are what the mask stands for")
	}

	// Every public read is masked: get (each version), search, both catalogues' queries.
	for _, p := range []string{path, path + "?version=1", path + "?version=2", path + "?version=3"} {
		code, got := f.call(t, reader, http.MethodGet, p, "")
		require.Equal(t, http.StatusOK, code, got)
		assertMasked(t, got)
	}
	for _, q := range []string{"/api/v2/team/infra/task/query", "/api/v2/task/query?teams=infra&names=deploy"} {
		code, got := f.call(t, reader, http.MethodGet, q, "")
		require.Equal(t, http.StatusOK, code, got)
		content, _ := got["content"].([]any)
		require.Len(t, content, 1, got)
		assertMasked(t, content[0].(map[string]any))
	}
	yml := f.do(t, request{as: reader, method: http.MethodGet, path: path, accept: yamlType})
	require.Equal(t, http.StatusOK, yml.code, string(yml.raw))
	assert.Contains(t, string(yml.raw), secrets.Mask)
	assert.NotContains(t, string(yml.raw), secretDefault)
	assert.NotContains(t, string(yml.raw), secretValue)

	// The Tekton YAML, sent back as it was read with a change, keeps them as well.
	require.Contains(t, string(yml.raw), "deploy v3")
	r := f.do(t, request{as: editor, method: http.MethodPut, path: path,
		body: strings.Replace(string(yml.raw), "deploy v3", "deploy v4", 1), contentType: yamlType})
	require.Equal(t, http.StatusOK, r.code, string(r.raw))
	assert.NotContains(t, string(r.raw), secretDefault)
	code, v4 := f.call(t, reader, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, code, v4)
	require.EqualValues(t, 4, v4["version"], "a change sent as YAML makes a version")

	// Baton's services get the clear values, of every version, for the runs that need them.
	for _, q := range []string{"ref=infra/deploy", "ref=infra/deploy&version=1", "ref=infra/deploy&version=2", "ref=infra/deploy&version=3", "ref=infra/deploy&version=4"} {
		p := f.resolved(t, q)
		assert.Equal(t, secretDefault, p["default"], q)
		assert.Equal(t, secretDefault, p["defaultValue"], q)
		assert.Equal(t, secretValue, p["value"], q)
	}

	// At rest, heads and versions hold them sealed only.
	stored := f.storedBodies(t)
	assert.Contains(t, stored, "enc:v1:")
	assert.NotContains(t, stored, secretDefault)
	assert.NotContains(t, stored, secretValue)

	// A new value replaces the stored one.
	code, v5 := f.call(t, editor, http.MethodPut, path,
		`{"changelog":{"reason":"rotated"},"spec":{"image":"alpine:3","script":"deploy","params":[
		 {"name":"token","type":"password","default":"rotated-secret"}]}}`)
	require.Equal(t, http.StatusOK, code, v5)
	assert.Equal(t, secrets.Mask, param(t, v5, "token")["default"])
	assert.Equal(t, "rotated-secret", f.resolved(t, "ref=infra/deploy")["default"])
	assert.NotContains(t, f.storedBodies(t), "rotated-secret")
}

func TestPasswordMaskOnANewTaskIsNoValue(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := f.call(t, admin, http.MethodPut, "/api/v2/task/fresh",
		`{"spec":{"image":"alpine:3","params":[{"name":"token","type":"password","default":"********"}]}}`)
	require.Equal(t, http.StatusCreated, code, out)
	_, has := param(t, out, "token")["default"]
	assert.False(t, has, "the mask stands for no stored value")
	_, has = f.resolved(t, "ref=fresh")["default"]
	assert.False(t, has)
}

func TestConfigRequiresASecretKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		wantErr string
	}{
		{"missing", "", "BATON_SECRET_KEY is required"},
		{"not a key", "short", "BATON_SECRET_KEY"},
		{"valid", testSecretKey, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := tasks.ConfigFromEnv(func(k string) string {
				if k == secrets.EnvKey {
					return tt.key
				}
				return ""
			})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, testSecretKey, cfg.SecretKey)
		})
	}
}
