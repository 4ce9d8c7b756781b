package tasks_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.yaml.in/yaml/v3"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/tasks"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// Principals the tests act as.
var (
	admin    = auth.Principal{Type: auth.TypeGlobal, ID: "bootstrap", Roles: []string{auth.RoleAdmin}}
	operator = auth.Principal{Type: auth.TypeUser, ID: "op", Name: "Olga", Roles: []string{auth.RoleOperator}}
	owner    = auth.Principal{Type: auth.TypeUser, ID: "u-owner", Name: "Owen", Teams: map[string]string{"infra": auth.RoleOwner}}
	editor   = auth.Principal{Type: auth.TypeUser, ID: "u-editor", Name: "Edith", Teams: map[string]string{"infra": auth.RoleEditor}}
	reader   = auth.Principal{Type: auth.TypeUser, ID: "u-reader", Name: "Rita", Teams: map[string]string{"infra": auth.RoleReader}}
	outsider = auth.Principal{Type: auth.TypeUser, ID: "u-out", Name: "Otto", Teams: map[string]string{"other": auth.RoleOwner}}
	service  = auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
)

const yamlType = "application/x-yaml"

// fakeUsage answers which workflows use a task from a table the test fills.
type fakeUsage struct {
	mu    sync.Mutex
	users map[string][]string
}

func (u *fakeUsage) WorkflowsUsing(_ context.Context, team, task string) ([]string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.users[team+"/"+task], nil
}

func (u *fakeUsage) set(ref string, workflows ...string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.users[ref] = workflows
}

type fixture struct {
	app    *fiber.App
	signer *auth.Signer
	db     *mongo.Database
	usage  *fakeUsage
	// databaseURL is the service's store (Config.DatabaseURL); "" is db.
	databaseURL string
}

func newFixture(t *testing.T) *fixture { return newFixtureOn(t, "") }

// newFixtureOn is newFixture on the store databaseURL picks (Config.DatabaseURL): "" is the
// test's MongoDB database.
func newFixtureOn(t *testing.T, databaseURL string) *fixture {
	t.Helper()
	client, err := mongox.Connect(t.Context(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	f := &fixture{db: client.Database(testkit.Database(t)), usage: &fakeUsage{users: map[string][]string{}}, databaseURL: databaseURL}
	f.signer, err = auth.NewSigner([]byte("tasks-test-key-0123456789"))
	require.NoError(t, err)
	f.app = f.start(t)
	return f
}

// start runs the service on the fixture's database, as a new replica would.
func (f *fixture) start(t *testing.T) *fiber.App {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	deps := tasks.Deps{DB: f.db, Signer: f.signer, Logger: logger, Usage: f.usage}
	if f.databaseURL != "" {
		deps.DB = nil // the service's own file holds everything
	}
	svc, err := tasks.New(t.Context(), tasks.Config{SecretKey: testSecretKey, DatabaseURL: f.databaseURL}, deps)
	require.NoError(t, err)
	if f.databaseURL != "" {
		// Run ends, closing the file, with the test.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- svc.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			assert.NoError(t, <-done)
		})
	}
	app := httpx.NewApp(httpx.Config{Name: "tasks", Logger: logger, NoTracing: true})
	svc.Routes(app)
	return app
}

type response struct {
	code   int
	header http.Header
	raw    []byte
}

// json decodes the body as a JSON object.
func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &out), string(r.raw))
	return out
}

type request struct {
	as          auth.Principal
	method      string
	path        string
	body        string
	contentType string
	accept      string
}

func (f *fixture) do(t *testing.T, r request) response {
	t.Helper()
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.path, body)
	if r.contentType == "" {
		r.contentType = fiber.MIMEApplicationJSON
	}
	req.Header.Set("Content-Type", r.contentType)
	if r.accept != "" {
		req.Header.Set("Accept", r.accept)
	}
	require.NoError(t, f.signer.SetHeaders(r.as, req.Header.Set))
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return response{code: resp.StatusCode, header: resp.Header, raw: raw}
}

// call sends a JSON request and decodes a JSON object answer (nil for none).
func (f *fixture) call(t *testing.T, as auth.Principal, method, path, body string) (int, map[string]any) {
	t.Helper()
	r := f.do(t, request{as: as, method: method, path: path, body: body})
	if len(r.raw) == 0 || r.raw[0] != '{' {
		return r.code, nil
	}
	return r.code, r.json(t)
}

const buildTask = `{"name":"build","displayName":"Build","description":"Builds it","category":"ci","icon":"hammer",
 "verified":true,"labels":{"env":"prod"},"changelog":{"reason":"first"},
 "spec":{"image":"golang:1.26","script":"go build ./...","params":[{"name":"pkg","type":"text","required":true}],
  "results":[{"name":"binary","description":"the path"}]}}`

func TestTeamTaskLifecycle(t *testing.T) {
	t.Parallel()
	teamTaskLifecycle(t, newFixture(t))
}

func teamTaskLifecycle(t *testing.T, f *fixture) {

	r := f.do(t, request{as: editor, method: http.MethodPost, path: "/api/v2/team/infra/task", body: buildTask})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))
	assert.Equal(t, "/api/v2/team/infra/task/build", r.header.Get("Location"))
	created := r.json(t)
	assert.Equal(t, "build", created["name"])
	assert.Equal(t, "team", created["scope"])
	assert.Equal(t, "infra", created["team"])
	assert.EqualValues(t, 1, created["version"])
	assert.Equal(t, "active", created["status"])
	assert.Equal(t, "template", created["type"])
	assert.Equal(t, false, created["verified"], "only admins verify tasks")
	assert.NotEmpty(t, created["creationDate"])
	assert.Equal(t, "Edith", created["changelog"].(map[string]any)["author"])
	assert.Equal(t, "first", created["changelog"].(map[string]any)["reason"])

	code, body := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", buildTask)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "TASK_ALREADY_EXISTS", body["reason"])

	code, got := f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/build", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, created, got)

	// A new version, then the latest replaced in place.
	code, v2 := f.call(t, editor, http.MethodPut, "/api/v2/team/infra/task/build",
		`{"description":"Builds it faster","changelog":{"reason":"faster"},"spec":{"image":"golang:1.26","script":"go build -p 2 ./..."}}`)
	require.Equal(t, http.StatusOK, code, v2)
	assert.EqualValues(t, 2, v2["version"])
	assert.Equal(t, created["creationDate"], v2["creationDate"], "the task's creation date stays")
	code, v2r := f.call(t, owner, http.MethodPut, "/api/v2/team/infra/task/build?replace=true",
		`{"name":"build","description":"Builds it fastest","changelog":{"reason":"fastest"},"spec":{"image":"golang:1.26"}}`)
	require.Equal(t, http.StatusOK, code, v2r)
	assert.EqualValues(t, 2, v2r["version"])

	versions := []struct {
		query       string
		wantCode    int
		wantVersion float64
		wantDesc    string
	}{
		{"", 200, 2, "Builds it fastest"},
		{"?version=2", 200, 2, "Builds it fastest"},
		{"?version=1", 200, 1, "Builds it"},
		{"?version=3", 404, 0, ""},
		{"?version=0", 400, 0, ""},
		{"?version=x", 400, 0, ""},
	}
	for _, tt := range versions {
		t.Run("read"+tt.query, func(t *testing.T) {
			code, got := f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/build"+tt.query, "")
			require.Equal(t, tt.wantCode, code, got)
			if code != 200 {
				return
			}
			assert.Equal(t, tt.wantVersion, got["version"])
			assert.Equal(t, tt.wantDesc, got["description"])
		})
	}

	r = f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/build/changelog"})
	require.Equal(t, http.StatusOK, r.code)
	var changelog []map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &changelog))
	require.Len(t, changelog, 2)
	assert.EqualValues(t, 2, changelog[0]["version"])
	assert.Equal(t, "Owen", changelog[0]["author"])
	assert.Equal(t, "fastest", changelog[0]["reason"])
	assert.NotEmpty(t, changelog[0]["date"])
	assert.EqualValues(t, 1, changelog[1]["version"])
	assert.Equal(t, "Edith", changelog[1]["author"])
	assert.Equal(t, "first", changelog[1]["reason"])

	// PUT creates a task that does not exist.
	r = f.do(t, request{as: editor, method: http.MethodPut, path: "/api/v2/team/infra/task/lint", body: `{"spec":{"image":"golangci/golangci-lint"}}`})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))
	assert.Equal(t, "/api/v2/team/infra/task/lint", r.header.Get("Location"))
	assert.EqualValues(t, 1, r.json(t)["version"])

	// Delete: refused while a workflow uses it, then gone.
	f.usage.set("infra/build", "release", "nightly")
	code, body = f.call(t, owner, http.MethodDelete, "/api/v2/team/infra/task/build", "")
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "TASK_IN_USE", body["reason"])
	assert.Contains(t, body["message"], "release, nightly")
	f.usage.set("infra/build")
	code, _ = f.call(t, owner, http.MethodDelete, "/api/v2/team/infra/task/build", "")
	assert.Equal(t, http.StatusNoContent, code)
	code, body = f.call(t, owner, http.MethodGet, "/api/v2/team/infra/task/build", "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "TASK_NOT_FOUND", body["reason"])
	code, _ = f.call(t, owner, http.MethodDelete, "/api/v2/team/infra/task/build", "")
	assert.Equal(t, http.StatusNotFound, code)

	// Created again under the same name, it starts over: old versions do not come back.
	code, again := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", buildTask)
	require.Equal(t, http.StatusCreated, code)
	assert.EqualValues(t, 1, again["version"])
	code, _ = f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/build?version=2", "")
	assert.Equal(t, http.StatusNotFound, code)
}

func TestRequestValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		wantCode   int
		wantReason string
		wantFields []string
	}{
		{"name with a slash", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a_b","spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"name with a space", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a b","spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"name too long", http.MethodPost, "/api/v2/team/infra/task", `{"name":"` + strings.Repeat("a", 65) + `","spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"no name", http.MethodPost, "/api/v2/team/infra/task", `{"spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"reserved name", http.MethodPost, "/api/v2/team/infra/task", `{"name":"Query","spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"path name differs", http.MethodPut, "/api/v2/team/infra/task/a", `{"name":"b","spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"bad path name", http.MethodPut, "/api/v2/team/infra/task/a.b", `{"spec":{"image":"x"}}`, 400, "TASK_INVALID_NAME", []string{"name"}},
		{"malformed JSON", http.MethodPost, "/api/v2/team/infra/task", `{"name":`, 400, "REQUEST_INVALID", nil},
		{"wrong field type", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a","verified":"yes"}`, 400, "TASK_INVALID", []string{"verified"}},
		{"every rule at once", http.MethodPost, "/api/v2/task",
			`{"name":"Mixed-Case-1","type":"nope","status":"gone","annotations":{"baton.io/icon":"x"},
			  "spec":{"script":"a","command":["b"],"stepName":"Bad_Step","envs":[{"value":"v"}],
			   "params":[{"name":"p"},{"name":"p","type":"colour"},{"name":"1x"}],
			   "results":[{"name":"r","type":"blob"},{"name":"r"}],"workspaces":[{"name":"Src"}]}}`,
			400, "TASK_INVALID", []string{
				"type", "status", "annotations.baton.io/icon", "spec.script", "spec.stepName", "spec.envs[0].name",
				"spec.params[1].name", "spec.params[1].type", "spec.params[2].name", "spec.results[0].type",
				"spec.results[1].name", "spec.workspaces[0].name",
			}},
		{"template without image", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a","spec":{"script":"echo"}}`, 400, "TASK_INVALID", []string{"spec.image"}},
		{"unsupported content type", http.MethodPost, "/api/v2/team/infra/task", "", 415, "UNSUPPORTED_MEDIA_TYPE", nil},
		{"bad replace", http.MethodPut, "/api/v2/team/infra/task/a?replace=maybe", `{"spec":{"image":"x"}}`, 400, "QUERY_INVALID_FILTERS", nil},
		{"label key with $", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a","labels":{"$where":"1"},"spec":{"image":"x"}}`, 400, "TASK_INVALID", []string{"labels"}},
		{"label key with NUL", http.MethodPost, "/api/v2/team/infra/task", `{"name":"a","labels":{"a\u0000b":"1"},"spec":{"image":"x"}}`, 400, "TASK_INVALID", []string{"labels"}},
		{"JSON nested too deep", http.MethodPost, "/api/v2/team/infra/task",
			`{"name":"a","spec":{"image":"x"},"annotations":{"x":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, 400, "REQUEST_INVALID", nil},
		{"YAML annotation nested too deep", http.MethodPost, "/api/v2/team/infra/task",
			"apiVersion: tekton.dev/v1\nkind: Task\nmetadata:\n  name: a\n  annotations:\n    baton.io/extra: '" +
				strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100) + "'\nspec:\n  steps:\n  - image: x\n", 400, "REQUEST_INVALID", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request{as: admin, method: tt.method, path: tt.path, body: tt.body}
			if tt.wantCode == 415 {
				req.contentType, req.body = "text/plain", "hello"
			}
			if strings.HasPrefix(tt.body, "apiVersion:") {
				req.contentType = yamlType
			}
			r := f.do(t, req)
			require.Equal(t, tt.wantCode, r.code, string(r.raw))
			body := r.json(t)
			assert.Equal(t, tt.wantReason, body["reason"])
			if tt.wantFields == nil {
				return
			}
			var fields []string
			for _, e := range body["errors"].([]any) {
				fields = append(fields, e.(map[string]any)["field"].(string))
			}
			assert.ElementsMatch(t, tt.wantFields, fields)
		})
	}
}

// everyField is a task using every field Baton knows, unknown ones at every level that
// keeps them, and annotations that are not strings.
const everyField = `{
  "name": "Deploy-App", "displayName": "Deploy the app", "description": "Rolls it out",
  "type": "template", "status": "inactive", "category": "delivery", "icon": "rocket",
  "labels": {"env": "prod", "baton.io/owner": "infra"},
  "annotations": {"note": "plain", "baton.io/position": {"x": 1, "y": 2.5}, "count": 3},
  "changelog": {"reason": "round trip"},
  "designer": {"color": "#ff0000", "tags": ["a", "b"]},
  "spec": {
    "image": "alpine:3.20", "command": ["/bin/sh", "-c"], "arguments": ["echo $(params.target)"],
    "workingDir": "/work", "stepName": "deploy",
    "envs": [{"name": "TARGET", "value": "$(params.target)"}, {"name": "EMPTY", "value": ""}],
    "params": [
      {"name": "target", "label": "Target", "type": "select", "required": true, "placeholder": "pick one",
       "helperText": "where to", "options": [{"key": "prod", "value": "Production"}], "default": "prod",
       "readOnly": false, "hiddenValue": false, "uiHint": {"width": 2}},
      {"name": "replicas", "type": "number", "default": 3, "minValueLength": 1, "maxValueLength": 2},
      {"name": "regions", "type": "multiselect", "default": ["eu", "us"], "value": ["eu"]},
      {"name": "config", "type": "json", "default": {"a": "1"}, "properties": {"a": {"type": "string"}}},
      {"name": "token", "type": "password", "hiddenValue": true, "required": false},
      {"name": "flag", "type": "boolean", "default": true, "description": "a flag"}
    ],
    "results": [{"name": "url", "description": "where it runs", "type": "string"},
                {"name": "meta", "type": "object", "properties": {"k": {"type": "string"}}, "origin": "ui"}],
    "workspaces": [{"name": "source", "description": "the code", "mountPath": "/src", "readOnly": true, "optional": true}],
    "sidecarHint": "none"
  }
}`

func TestJSONYAMLRoundTrips(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// JSON → YAML → JSON.
	r := f.do(t, request{as: editor, method: http.MethodPost, path: "/api/v2/team/infra/task", body: everyField})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))
	asJSON := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/Deploy-App"}).json(t)
	spec := asJSON["spec"].(map[string]any)
	assert.Equal(t, map[string]any{"color": "#ff0000", "tags": []any{"a", "b"}}, asJSON["designer"], "unknown task fields kept")
	assert.Equal(t, "none", spec["sidecarHint"], "unknown spec fields kept")
	assert.Equal(t, map[string]any{"width": float64(2)}, spec["params"].([]any)[0].(map[string]any)["uiHint"], "unknown param fields kept")
	assert.Equal(t, "ui", spec["results"].([]any)[1].(map[string]any)["origin"], "unknown result fields kept")
	assert.Equal(t, map[string]any{"x": float64(1), "y": 2.5}, asJSON["annotations"].(map[string]any)["baton.io/position"])

	y := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/Deploy-App", accept: yamlType})
	require.Equal(t, http.StatusOK, y.code)
	assert.Equal(t, yamlType, y.header.Get("Content-Type"))
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(y.raw, &doc), string(y.raw))
	assert.Equal(t, "tekton.dev/v1", doc["apiVersion"])
	assert.Equal(t, "Task", doc["kind"])
	steps := doc["spec"].(map[string]any)["steps"].([]any)
	require.Len(t, steps, 1)
	assert.Equal(t, "deploy", steps[0].(map[string]any)["name"])
	assert.Equal(t, []any{"echo $(params.target)"}, steps[0].(map[string]any)["args"])
	ann := doc["metadata"].(map[string]any)["annotations"].(map[string]any)
	assert.Equal(t, "Deploy the app", ann["baton.io/displayName"])
	assert.Equal(t, "rocket", ann["baton.io/icon"])
	assert.Equal(t, "delivery", ann["baton.io/category"])
	assert.Contains(t, ann, "baton.io/params")

	r = f.do(t, request{as: editor, method: http.MethodPut, path: "/api/v2/team/infra/task/Deploy-App?replace=true", body: string(y.raw), contentType: yamlType})
	require.Equal(t, http.StatusOK, r.code, string(r.raw))
	back := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/Deploy-App"}).json(t)
	assert.Equal(t, withoutChangelogDate(asJSON), withoutChangelogDate(back))

	// YAML → JSON → YAML, from a Tekton Task written by hand.
	tekton := `apiVersion: tekton.dev/v1beta1
kind: Task
metadata:
  name: git-clone
  labels:
    app.kubernetes.io/version: "0.9"
  annotations:
    tekton.dev/pipelines.minVersion: "0.38.0"
    baton.io/displayName: Git clone
    baton.io/category: scm
spec:
  description: Clones a repository.
  params:
    - name: url
      description: The repository URL.
    - name: revision
      type: string
      default: main
    - name: refspecs
      type: array
      default: ["+refs/heads/*:refs/heads/*"]
    - name: settings
      type: object
      properties:
        depth: {type: string}
      default:
        depth: "1"
  results:
    - name: commit
      description: The commit cloned.
  workspaces:
    - name: output
      description: Where the repository goes.
  steps:
    - name: clone
      image: alpine/git:2.45.2
      workingDir: $(workspaces.output.path)
      env:
        - name: URL
          value: $(params.url)
      script: |
        #!/bin/sh
        git clone "$URL" . && git rev-parse HEAD | tr -d '\n' > $(results.commit.path)
`
	r = f.do(t, request{as: editor, method: http.MethodPost, path: "/api/v2/team/infra/task", body: tekton, contentType: yamlType, accept: yamlType})
	require.Equal(t, http.StatusCreated, r.code, string(r.raw))
	assert.Equal(t, yamlType, r.header.Get("Content-Type"))
	y1 := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/git-clone", accept: yamlType})
	j := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/git-clone"})
	jv := j.json(t)
	assert.Equal(t, "Git clone", jv["displayName"])
	assert.Equal(t, "0.38.0", jv["annotations"].(map[string]any)["tekton.dev/pipelines.minVersion"])
	params := jv["spec"].(map[string]any)["params"].([]any)
	assert.Equal(t, map[string]any{"name": "url", "key": "url", "label": "url", "description": "The repository URL.", "type": "text", "required": true, "readOnly": false, "hiddenValue": false}, params[0])
	assert.Equal(t, []any{"+refs/heads/*:refs/heads/*"}, params[2].(map[string]any)["default"])
	assert.Equal(t, "multiselect", params[2].(map[string]any)["type"])
	r = f.do(t, request{as: editor, method: http.MethodPut, path: "/api/v2/team/infra/task/git-clone?replace=true", body: string(j.raw)})
	require.Equal(t, http.StatusOK, r.code, string(r.raw))
	y2 := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/git-clone", accept: yamlType})
	assert.Equal(t, withoutChangelogAnnotation(t, y1.raw), withoutChangelogAnnotation(t, y2.raw))
	var hand, out map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(tekton), &hand))
	require.NoError(t, yaml.Unmarshal(y2.raw, &out))
	assert.Equal(t, hand["spec"].(map[string]any)["steps"], out["spec"].(map[string]any)["steps"], "the step is unchanged")
	assert.Equal(t, hand["spec"].(map[string]any)["workspaces"], out["spec"].(map[string]any)["workspaces"])
	assert.Equal(t, hand["metadata"].(map[string]any)["labels"], out["metadata"].(map[string]any)["labels"])
}

func withoutChangelogDate(task map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range task {
		out[k] = v
	}
	c := map[string]any{}
	for k, v := range task["changelog"].(map[string]any) {
		if k != "date" {
			c[k] = v
		}
	}
	out["changelog"] = c
	return out
}

func withoutChangelogAnnotation(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(raw, &doc), string(raw))
	delete(doc["metadata"].(map[string]any)["annotations"].(map[string]any), "baton.io/changelog")
	return doc
}

func TestValidateYAML(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const valid = `apiVersion: tekton.dev/v1
kind: Task
metadata:
  name: hello
spec:
  params:
    - name: who
      default: world
  steps:
    - image: alpine:3.20
      script: echo hello $(params.who)
`
	tests := []struct {
		name       string
		body       string
		wantFields []string
	}{
		{"valid", valid, nil},
		{"v1beta1", strings.Replace(valid, "tekton.dev/v1", "tekton.dev/v1beta1", 1), nil},
		{"wrong apiVersion and kind", strings.Replace(strings.Replace(valid, "tekton.dev/v1", "v1", 1), "kind: Task", "kind: Pipeline", 1),
			[]string{"apiVersion", "kind"}},
		{"no name", strings.Replace(valid, "  name: hello\n", "", 1), []string{"metadata.name"}},
		{"bad name", strings.Replace(valid, "name: hello", "name: hello_world", 1), []string{"metadata.name"}},
		{"two steps", valid + "    - image: alpine\n", []string{"spec.steps"}},
		{"no steps", strings.Split(valid, "  steps:")[0], []string{"spec.steps"}},
		{"unknown fields", strings.Replace(valid, "    - image: alpine:3.20\n", "    - image: alpine:3.20\n      securityContext: {}\n", 1) +
			"  sidecars: []\n", []string{"spec.steps[].securityContext", "spec.sidecars"}},
		{"script and command", strings.Replace(valid, "      script:", "      command: [sh]\n      script:", 1), []string{"spec.steps[0].script"}},
		{"default of the wrong type", strings.Replace(valid, "default: world", "type: array\n      default: world", 1), []string{"spec.params[0].default"}},
		{"object without properties", strings.Replace(valid, "default: world", "type: object", 1), []string{"spec.params[0].properties"}},
		{"unknown param type", strings.Replace(valid, "default: world", "type: number", 1), []string{"spec.params[0].type"}},
		{"template without image", strings.Replace(valid, "    - image: alpine:3.20\n      script", "    - script", 1), []string{"spec.steps[0].image"}},
		{"two documents", valid + "---\n" + valid, []string{"body"}},
		{"not YAML", "{{{", []string{"body"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/api/v2/task/validate", "/api/v2/team/infra/task/validate"} {
				r := f.do(t, request{as: reader, method: http.MethodPost, path: path, body: tt.body, contentType: yamlType})
				if tt.wantFields == nil {
					assert.Equal(t, http.StatusNoContent, r.code, string(r.raw))
					continue
				}
				require.Equal(t, http.StatusBadRequest, r.code, string(r.raw))
				body := r.json(t)
				assert.Equal(t, "TASK_INVALID", body["reason"])
				var fields []string
				for _, e := range body["errors"].([]any) {
					fields = append(fields, e.(map[string]any)["field"].(string))
				}
				assert.ElementsMatch(t, tt.wantFields, fields, string(r.raw))
			}
		})
	}

	r := f.do(t, request{as: reader, method: http.MethodPost, path: "/api/v2/task/validate", body: `{}`})
	assert.Equal(t, http.StatusUnsupportedMediaType, r.code)
	r = f.do(t, request{as: outsider, method: http.MethodPost, path: "/api/v2/team/infra/task/validate", body: valid, contentType: yamlType})
	assert.Equal(t, http.StatusForbidden, r.code)
	// What validates is what creates.
	r = f.do(t, request{as: editor, method: http.MethodPost, path: "/api/v2/team/infra/task", body: valid, contentType: yamlType})
	assert.Equal(t, http.StatusCreated, r.code, string(r.raw))
	r = f.do(t, request{as: editor, method: http.MethodPut, path: "/api/v2/team/infra/task/hello", body: valid + "    - image: x\n", contentType: yamlType})
	assert.Equal(t, http.StatusBadRequest, r.code)
	assert.Equal(t, "TASK_INVALID", r.json(t)["reason"])
}

func TestQuery(t *testing.T) {
	t.Parallel()
	query(t, newFixture(t))
}

func query(t *testing.T, f *fixture) {
	for _, body := range []string{
		`{"name":"a1","labels":{"env":"prod","tier":"1"},"spec":{"image":"x"}}`,
		`{"name":"a2","labels":{"env":"dev"},"spec":{"image":"x"}}`,
		`{"name":"a3","labels":{"env":"prod"},"status":"inactive","spec":{"image":"x"}}`,
		`{"name":"a4","spec":{"image":"x"}}`,
	} {
		code, out := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", body)
		require.Equal(t, http.StatusCreated, code, out)
	}
	code, out := f.call(t, outsider, http.MethodPost, "/api/v2/team/other/task", `{"name":"b1","spec":{"image":"x"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	// A new version of a1 is still one task.
	code, out = f.call(t, editor, http.MethodPut, "/api/v2/team/infra/task/a1", `{"labels":{"env":"prod","tier":"1"},"spec":{"image":"y"}}`)
	require.Equal(t, http.StatusOK, code, out)

	tests := []struct {
		name      string
		as        auth.Principal
		path      string
		wantCode  int
		wantNames []string
		wantTotal float64
	}{
		{"default: creation date ascending", reader, "/api/v2/team/infra/task/query", 200, []string{"a1", "a2", "a3", "a4"}, 4},
		{"descending", reader, "/api/v2/team/infra/task/query?sort=DESC", 200, []string{"a4", "a3", "a2", "a1"}, 4},
		{"labels match all pairs", reader, "/api/v2/team/infra/task/query?labels=env%3Dprod,tier%3D1", 200, []string{"a1"}, 1},
		{"labels", reader, "/api/v2/team/infra/task/query?labels=env%3Dprod", 200, []string{"a1", "a3"}, 2},
		{"statuses", reader, "/api/v2/team/infra/task/query?statuses=inactive", 200, []string{"a3"}, 1},
		{"unknown status matches nothing", reader, "/api/v2/team/infra/task/query?statuses=gone", 200, nil, 0},
		{"names", reader, "/api/v2/team/infra/task/query?names=a2,a4,zz", 200, []string{"a2", "a4"}, 2},
		{"paging keeps the exact total", reader, "/api/v2/team/infra/task/query?limit=3&page=1", 200, []string{"a4"}, 4},
		{"first page", reader, "/api/v2/team/infra/task/query?limit=3&page=0&sort=asc", 200, []string{"a1", "a2", "a3"}, 4},
		{"global search of own team", reader, "/api/v2/task/query?teams=infra&statuses=active", 200, []string{"a1", "a2", "a4"}, 3},
		{"global search of another team", reader, "/api/v2/task/query?teams=infra,other", 403, nil, 0},
		{"admins search any team", admin, "/api/v2/task/query?teams=other,infra&names=a1,b1", 200, []string{"a1", "b1"}, 2},
		{"operators search any team", operator, "/api/v2/task/query?teams=other", 200, []string{"b1"}, 1},
		{"another team's search", outsider, "/api/v2/team/infra/task/query", 403, nil, 0},
		{"bad limit", reader, "/api/v2/team/infra/task/query?limit=1001", 400, nil, 0},
		{"bad sort", reader, "/api/v2/team/infra/task/query?sort=name", 400, nil, 0},
		{"bad labels", reader, "/api/v2/team/infra/task/query?labels=env", 400, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out := f.call(t, tt.as, http.MethodGet, tt.path, "")
			require.Equal(t, tt.wantCode, code, out)
			if code != 200 {
				return
			}
			var names []string
			for _, c := range out["content"].([]any) {
				names = append(names, c.(map[string]any)["name"].(string))
			}
			assert.Equal(t, tt.wantNames, names)
			assert.Equal(t, tt.wantTotal, out["totalElements"])
		})
	}

	code, out = f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/query?names=a1", "")
	require.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, 2, out["content"].([]any)[0].(map[string]any)["version"], "searches show the latest version")
}

func TestAuthorization(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", `{"name":"t","spec":{"image":"x"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	anonymous := auth.Anonymous
	tests := []struct {
		name     string
		as       auth.Principal
		method   string
		path     string
		body     string
		wantCode int
	}{
		{"reader reads", reader, http.MethodGet, "/api/v2/team/infra/task/t", "", 200},
		{"reader reads the changelog", reader, http.MethodGet, "/api/v2/team/infra/task/t/changelog", "", 200},
		{"reader cannot create", reader, http.MethodPost, "/api/v2/team/infra/task", `{"name":"u","spec":{"image":"x"}}`, 403},
		{"reader cannot add a version", reader, http.MethodPut, "/api/v2/team/infra/task/t", `{"spec":{"image":"x"}}`, 403},
		{"editor cannot delete", editor, http.MethodDelete, "/api/v2/team/infra/task/t", "", 403},
		{"another team cannot read", outsider, http.MethodGet, "/api/v2/team/infra/task/t", "", 403},
		{"another team cannot write", outsider, http.MethodPut, "/api/v2/team/infra/task/t", `{"spec":{"image":"x"}}`, 403},
		{"another team cannot delete", outsider, http.MethodDelete, "/api/v2/team/infra/task/t", "", 403},
		{"anyone reads the catalogue", outsider, http.MethodGet, "/api/v2/task/sleep", "", 200},
		{"anyone reads the catalogue's changelog", reader, http.MethodGet, "/api/v2/task/sleep/changelog", "", 200},
		{"anyone searches the catalogue", reader, http.MethodGet, "/api/v2/task/query", "", 200},
		{"team editor cannot write the catalogue", editor, http.MethodPost, "/api/v2/task", `{"name":"g","spec":{"image":"x"}}`, 403},
		{"team owner cannot change the catalogue", owner, http.MethodPut, "/api/v2/task/sleep", `{"type":"sleep"}`, 403},
		{"operators write the catalogue", operator, http.MethodPost, "/api/v2/task", `{"name":"g","spec":{"image":"x"}}`, 201},
		{"admins write the catalogue", admin, http.MethodPut, "/api/v2/task/g", `{"spec":{"image":"y"}}`, 200},
		{"global tasks cannot be deleted", admin, http.MethodDelete, "/api/v2/task/g", "", 405},
		{"anonymous callers are refused", anonymous, http.MethodGet, "/api/v2/task/sleep", "", 401},
		{"users cannot resolve", admin, http.MethodGet, "/internal/v1/tasks/resolve?ref=sleep", "", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out := f.call(t, tt.as, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.wantCode, code, out)
		})
	}

	// An operator's version of a verified task is not verified; an admin's may be.
	code, out = f.call(t, operator, http.MethodPut, "/api/v2/task/g", `{"verified":true,"spec":{"image":"x"}}`)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, false, out["verified"])
	code, out = f.call(t, admin, http.MethodPut, "/api/v2/task/g", `{"verified":true,"spec":{"image":"x"}}`)
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, true, out["verified"])
}

func TestCatalogueSeeding(t *testing.T) {
	t.Parallel()
	catalogueSeeding(t, newFixture(t))
}

func catalogueSeeding(t *testing.T, f *fixture) {
	wantTypes := map[string]string{
		"switch": "decision", "wait-for-event": "eventwait", "manual-approval": "approval", "manual-task": "manual",
		"set-result-parameter": "setwfproperty", "set-workflow-result-status": "setwfstatus", "sleep": "sleep",
		"acquire-lock": "acquirelock", "release-lock": "releaselock", "run-workflow": "runworkflow",
		"run-scheduled-workflow": "runscheduledworkflow", "run-custom-task": "custom", "execute-shell": "script",
		"send-to-worker": "generic", "http-request": "template", "json-transform": "template", "send-chat-message": "template",
	}
	wantParams := map[string][]string{
		"switch": {"value"}, "wait-for-event": {"topic"},
		"manual-approval":      {"approverGroupRef", "numberOfApprovers", "instructions"},
		"manual-task":          {"instructions"},
		"set-result-parameter": {"output", "value"}, "set-workflow-result-status": {"status"},
		"sleep": {"duration"}, "acquire-lock": {"key", "timeout"}, "release-lock": {"key"},
		"run-workflow":           {"workflowRef", "workflowVersion", "wait", "params"},
		"run-scheduled-workflow": {"workflowRef", "futureIn", "futurePeriod", "time", "timezone", "params", "labels"},
		"run-custom-task":        {"image", "command", "arguments", "script", "envs"},
		"execute-shell":          {"script", "shell"},
		"send-to-worker":         {"queue"},
		"http-request":           {"url", "method", "headers", "body"},
		"json-transform":         {"input", "filter"},
		"send-chat-message":      {"webhookUrl", "text"},
	}
	catalogue := func() map[string]map[string]any {
		code, out := f.call(t, reader, http.MethodGet, "/api/v2/task/query", "")
		require.Equal(t, http.StatusOK, code, out)
		got := map[string]map[string]any{}
		for _, c := range out["content"].([]any) {
			task := c.(map[string]any)
			got[task["name"].(string)] = task
		}
		assert.EqualValues(t, len(wantTypes), out["totalElements"])
		return got
	}
	got := catalogue()
	for name, typ := range wantTypes {
		task := got[name]
		require.NotNil(t, task, name)
		assert.Equal(t, typ, task["type"], name)
		assert.Equal(t, true, task["verified"], name)
		assert.Equal(t, "global", task["scope"], name)
		var params []string
		for _, p := range task["spec"].(map[string]any)["params"].([]any) {
			params = append(params, p.(map[string]any)["name"].(string))
		}
		assert.Equal(t, wantParams[name], params, name)
	}
	results := got["http-request"]["spec"].(map[string]any)["results"].([]any)
	assert.Equal(t, "status", results[0].(map[string]any)["name"])
	assert.Equal(t, "body", results[1].(map[string]any)["name"])

	// Every catalogue task leaves as YAML that validates.
	for name := range wantTypes {
		y := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/task/" + name, accept: yamlType})
		require.Equal(t, http.StatusOK, y.code)
		r := f.do(t, request{as: reader, method: http.MethodPost, path: "/api/v2/task/validate", body: string(y.raw), contentType: yamlType})
		assert.Equal(t, http.StatusNoContent, r.code, "%s: %s", name, r.raw)
	}

	// An admin's change survives restarts; starting again adds nothing.
	code, out := f.call(t, admin, http.MethodPut, "/api/v2/task/sleep", `{"type":"sleep","status":"inactive","description":"ours"}`)
	require.Equal(t, http.StatusOK, code, out)
	f.app = f.start(t)
	f.app = f.start(t)
	got = catalogue()
	assert.EqualValues(t, 2, got["sleep"]["version"])
	assert.Equal(t, "ours", got["sleep"]["description"])
	assert.Equal(t, "inactive", got["sleep"]["status"])
	r := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/task/switch/changelog"})
	var changelog []map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &changelog))
	require.Len(t, changelog, 1)
	assert.Equal(t, "baton", changelog[0]["author"])
}

func TestResolve(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	code, out := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", `{"name":"build","spec":{"image":"x"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = f.call(t, editor, http.MethodPut, "/api/v2/team/infra/task/build", `{"status":"inactive","spec":{"image":"y"}}`)
	require.Equal(t, http.StatusOK, code, out)

	tests := []struct {
		name        string
		query       string
		wantCode    int
		wantReason  string
		wantVersion float64
		wantImage   string
	}{
		{"global task", "ref=sleep", 200, "", 1, ""},
		{"team task, latest", "ref=infra/build", 200, "", 2, "y"},
		{"team task, pinned version", "ref=infra/build&version=1", 200, "", 1, "x"},
		{"unknown version", "ref=infra/build&version=3", 404, "TASK_NOT_FOUND", 0, ""},
		{"unknown task", "ref=infra/nothing", 404, "TASK_NOT_FOUND", 0, ""},
		{"another team's name", "ref=other/build", 404, "TASK_NOT_FOUND", 0, ""},
		{"global name of a team task", "ref=build", 404, "TASK_NOT_FOUND", 0, ""},
		{"no ref", "", 400, "REQUEST_INVALID", 0, ""},
		{"bad name", "ref=infra/a_b", 400, "TASK_INVALID_NAME", 0, ""},
		{"too many parts", "ref=a/b/c", 400, "REQUEST_INVALID", 0, ""},
		{"bad version", "ref=sleep&version=-1", 400, "QUERY_INVALID_FILTERS", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out := f.call(t, service, http.MethodGet, "/internal/v1/tasks/resolve?"+tt.query, "")
			require.Equal(t, tt.wantCode, code, out)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, out["reason"])
				return
			}
			assert.Equal(t, tt.wantVersion, out["version"])
			if tt.wantImage != "" {
				assert.Equal(t, tt.wantImage, out["spec"].(map[string]any)["image"])
			}
		})
	}
	code, out = f.call(t, service, http.MethodGet, "/internal/v1/tasks/resolve?ref=infra/build", "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "inactive", out["status"], "the caller judges the status")
}

// Concurrent writers never lose one another's versions: every PUT that answers 200 made
// exactly one version, and each version holds what its writer sent.
func TestConcurrentVersionsAreNotLost(t *testing.T) {
	t.Parallel()
	concurrentVersionsAreNotLost(t, newFixture(t))
}

func concurrentVersionsAreNotLost(t *testing.T, f *fixture) {
	code, out := f.call(t, editor, http.MethodPost, "/api/v2/team/infra/task", `{"name":"busy","spec":{"image":"v0"}}`)
	require.Equal(t, http.StatusCreated, code, out)

	const writers = 6
	images := make(chan string, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			image := "img-" + string(rune('a'+i))
			code, out := f.call(t, editor, http.MethodPut, "/api/v2/team/infra/task/busy", `{"spec":{"image":"`+image+`"}}`)
			switch code {
			case http.StatusOK:
				images <- image
			case http.StatusConflict:
				assert.Equal(t, "CONCURRENT_MODIFICATION", out["reason"])
			default:
				t.Errorf("unexpected answer %d: %v", code, out)
			}
		})
	}
	wg.Wait()
	close(images)
	var written []string
	for image := range images {
		written = append(written, image)
	}
	require.NotEmpty(t, written)

	code, latest := f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/busy", "")
	require.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, 1+len(written), latest["version"])
	var stored []string
	for v := 2; v <= 1+len(written); v++ {
		code, got := f.call(t, reader, http.MethodGet, "/api/v2/team/infra/task/busy?version="+itoa(v), "")
		require.Equal(t, http.StatusOK, code, got)
		stored = append(stored, got["spec"].(map[string]any)["image"].(string))
	}
	assert.ElementsMatch(t, written, stored)
	r := f.do(t, request{as: reader, method: http.MethodGet, path: "/api/v2/team/infra/task/busy/changelog"})
	var changelog []map[string]any
	require.NoError(t, json.Unmarshal(r.raw, &changelog))
	assert.Len(t, changelog, 1+len(written))
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestRequestsWithoutAServiceCredentialAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"/api/v2/task/sleep", "/internal/v1/tasks/resolve?ref=sleep"} {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Header.Set(auth.HeaderPrincipal, "eyJ0eXBlIjoic2VydmljZSJ9")
		req.Header.Set(auth.HeaderSignature, "00")
		resp, err := f.app.Test(req, -1)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}
}

func TestTeamDeletionRemovesItsTasks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TeamEvents))
	producer := kafkax.NewProducer(kcfg)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := tasks.New(ctx, tasks.Config{GroupID: kcfg.TopicPrefix + "tasks", SecretKey: testSecretKey},
		tasks.Deps{DB: f.db, Signer: f.signer, Logger: logger, Usage: f.usage, Kafka: kcfg})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = producer.Close()
	})

	for _, path := range []string{"/api/v2/team/gone/task", "/api/v2/team/infra/task", "/api/v2/team/marker/task"} {
		code, out := f.call(t, admin, http.MethodPost, path, `{"name":"t","spec":{"image":"x"}}`)
		require.Equal(t, http.StatusCreated, code, out)
	}
	code, out := f.call(t, admin, http.MethodPut, "/api/v2/team/gone/task/t", `{"spec":{"image":"y"}}`)
	require.Equal(t, http.StatusOK, code, out)

	deleted := func(team string) event.Event {
		e, err := events.New("team-deleted-"+team, "/baton/identity", events.TypeTeamDeleted, "/team/"+team,
			events.TeamDeleted{ID: "id-" + team, Name: team})
		require.NoError(t, err)
		return e
	}
	gone := deleted("gone")
	require.NoError(t, producer.Publish(ctx, events.TeamEvents, "gone", gone))
	require.Eventually(t, func() bool {
		code, _ := f.call(t, admin, http.MethodGet, "/api/v2/team/gone/task/t", "")
		return code == http.StatusNotFound
	}, 30*time.Second, 20*time.Millisecond)
	code, _ = f.call(t, admin, http.MethodGet, "/api/v2/team/infra/task/t", "")
	assert.Equal(t, http.StatusOK, code, "other teams keep their tasks")

	// The team is created again and gets a task; the event delivered again spares it.
	// The marker team's deletion, published after it on the same partition, says when
	// the repeat has been handled.
	code, out = f.call(t, admin, http.MethodPost, "/api/v2/team/gone/task", `{"name":"t","spec":{"image":"new"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	require.NoError(t, producer.Publish(ctx, events.TeamEvents, "gone", gone))
	require.NoError(t, producer.Publish(ctx, events.TeamEvents, "marker", deleted("marker")))
	require.Eventually(t, func() bool {
		code, _ := f.call(t, admin, http.MethodGet, "/api/v2/team/marker/task/t", "")
		return code == http.StatusNotFound
	}, 30*time.Second, 20*time.Millisecond)
	code, out = f.call(t, admin, http.MethodGet, "/api/v2/team/gone/task/t", "")
	require.Equal(t, http.StatusOK, code, out)
	assert.EqualValues(t, 1, out["version"])
	assert.Equal(t, "new", out["spec"].(map[string]any)["image"])
}
