package workflows_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/tasksapi"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/catalogue"
)

const templates = "/api/v2/workflowtemplate"

// Templates are global: anyone authenticated reads them, `workflowtemplate/write` writes
// them; a team workflow is made from one by posting its body to the team.
func TestTemplates(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	operator := auth.Principal{Type: auth.TypeUser, ID: "u-op", Name: "Opal Operator", Roles: []string{auth.RoleOperator}}

	body := chain("HTTP Check", 2)
	body["labels"] = map[string]any{"kind": "http"}
	body["markdown"] = "# Checks a URL"
	f.must(t, http.StatusForbidden, owner, http.MethodPost, templates, body) // a team role is not enough
	created := f.must(t, http.StatusCreated, operator, http.MethodPost, templates, body)
	assert.Equal(t, templates+"/http-check", created.header.Get("Location"))
	tpl := created.body
	assert.Equal(t, "http-check", tpl["name"])
	assert.NotContains(t, tpl, "team")
	assert.NotContains(t, tpl, "triggers", "a template leaves triggers to the workflows made from it")
	assert.NotContains(t, tpl, "status")
	f.must(t, http.StatusConflict, admin, http.MethodPost, templates, body)

	v2 := chain("http-check", 3)
	v2["labels"] = map[string]any{"kind": "http"}
	v2["markdown"] = "# Checks a URL"
	assert.EqualValues(t, 2, f.must(t, http.StatusOK, admin, http.MethodPut, templates, v2).body["version"])
	assert.EqualValues(t, 2, f.must(t, http.StatusOK, admin, http.MethodPut, templates+"?replace=true", v2).body["version"])
	slack := chain("chat-message", 1)
	slack["labels"] = map[string]any{"kind": "chat"}
	f.must(t, http.StatusCreated, admin, http.MethodPut, templates, slack)

	tests := []struct {
		name      string
		path      string
		wantCode  int
		wantNames []string
		wantTasks int // for a single template; -1: no tasks
	}{
		{"latest", templates + "/http-check", 200, nil, 5},
		{"version 1", templates + "/http-check?version=1", 200, nil, 4},
		{"without tasks", templates + "/http-check?withTasks=false", 200, nil, -1},
		{"unknown", templates + "/nope", 404, nil, 0},
		{"query", templates + "/query", 200, []string{"http-check", "chat-message"}, 0},
		{"query newest first", templates + "/query?sort=DESC", 200, []string{"chat-message", "http-check"}, 0},
		{"query by label", templates + "/query?labels=kind%3Dchat", 200, []string{"chat-message"}, 0},
		{"query by name", templates + "/query?names=http-check", 200, []string{"http-check"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.must(t, tt.wantCode, outsider, http.MethodGet, tt.path, nil) // any team may read
			switch {
			case tt.wantCode != 200:
			case tt.wantNames != nil:
				assert.Equal(t, tt.wantNames, names(res.body["content"].([]any), "name"))
			case tt.wantTasks < 0:
				assert.NotContains(t, res.body, "tasks")
			default:
				assert.Len(t, res.body["tasks"], tt.wantTasks)
			}
		})
	}

	// A team workflow from the template: its body posted to the team.
	src := f.must(t, http.StatusOK, editor, http.MethodGet, templates+"/http-check", nil)
	wf := f.must(t, http.StatusCreated, editor, http.MethodPost, base, src.raw).body
	assert.Equal(t, "http-check", wf["name"])
	assert.Equal(t, "infra", wf["team"])
	assert.EqualValues(t, 1, wf["version"])
	assert.JSONEq(t, js(t, src.body["tasks"]), js(t, wf["tasks"]))
	assert.Equal(t, "# Checks a URL", wf["markdown"])

	f.must(t, http.StatusForbidden, operator, http.MethodDelete, templates+"/http-check", nil)
	f.must(t, http.StatusNoContent, admin, http.MethodDelete, templates+"/http-check", nil)
	f.must(t, http.StatusNotFound, reader, http.MethodGet, templates+"/http-check", nil)
	// The workflow made from it stays.
	f.must(t, http.StatusOK, reader, http.MethodGet, base+"/http-check", nil)
}

// Parallel creates never pass the team's limit; failed creates and deletes give room back.
func TestQuotaUnderParallelCreates(t *testing.T) {
	t.Parallel()
	const limit = 5
	f := newFixture(t, fixtureOptions{quota: app.DefaultQuota(limit)})

	const creators = 16
	codes := make([]int, creators)
	var wg sync.WaitGroup
	for i := range creators {
		wg.Go(func() {
			res := f.call(t, editor, http.MethodPost, base, chain(fmt.Sprintf("wf-%02d", i), 1))
			codes[i] = res.code
			if res.code == http.StatusTooManyRequests {
				assert.Equal(t, "QUOTA_EXCEEDED", res.body["reason"])
				assert.NotEmpty(t, res.header.Get("Retry-After"))
			}
		})
	}
	wg.Wait()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	assert.Equal(t, map[int]int{http.StatusCreated: limit, http.StatusTooManyRequests: creators - limit}, count)
	total := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/query", nil).body["totalElements"]
	assert.EqualValues(t, limit, total)

	// A new version of an existing workflow needs no room.
	existing := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/query?limit=1", nil).body["content"].([]any)[0].(map[string]any)["name"].(string)
	f.must(t, http.StatusOK, editor, http.MethodPut, base, chain(existing, 2))
	f.must(t, http.StatusTooManyRequests, editor, http.MethodPut, base, chain("one-more", 1))

	// Deleting frees one place; creates that fail (invalid, taken) do not use it up.
	f.must(t, http.StatusNoContent, owner, http.MethodDelete, base+"/"+existing, nil)
	f.must(t, http.StatusBadRequest, editor, http.MethodPost, base, workflow(start, end))
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("replacement", 1))
	f.must(t, http.StatusConflict, editor, http.MethodPost, base, chain("replacement", 1))
	f.must(t, http.StatusTooManyRequests, editor, http.MethodPost, base, chain("one-too-many", 1))
}

// Task references resolve over HTTP against the tasks service's internal endpoint, found
// through discovery and called with the workflows service's signed principal.
func TestTaskResolutionOverHTTP(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte(testKey))
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		if err != nil || p.Type != auth.TypeService || r.URL.Path != "/internal/v1/tasks/resolve" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		mu.Lock()
		seen = append(seen, r.URL.RawQuery)
		mu.Unlock()
		switch r.URL.Query().Get("ref") {
		case "http-request":
		case "routeless": // as a tasks service without the endpoint answers
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":404,"reason":"ROUTE_NOT_FOUND"}`))
			return
		default:
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"name": "http-request", "version": 4, "status": "active", "type": "template",
			"spec": map[string]any{"params": []any{map[string]any{"name": "url", "required": true}}, "results": []any{map[string]any{"name": "status"}}},
		})
	}))
	static := registry.NewStatic(map[string][]string{"tasks": {srv.URL}})
	f := newFixture(t, fixtureOptions{tasks: catalogue.New(tasksapi.New(static, signer, auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}))})

	w := f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("remote", 2)).body
	assert.EqualValues(t, 4, w["tasks"].([]any)[1].(map[string]any)["taskVersion"])
	mu.Lock()
	assert.Equal(t, []string{"ref=http-request"}, seen, "one call per distinct reference")
	mu.Unlock()

	bad := chain("remote-bad", 1)
	bad["tasks"].([]any)[1].(map[string]any)["taskRef"] = "missing"
	res := f.must(t, http.StatusBadRequest, editor, http.MethodPost, base, bad)
	assert.Equal(t, "WORKFLOW_INVALID_TASK_REF", res.body["reason"])

	// A tasks service without the endpoint is not a verdict on the workflow.
	routeless := chain("remote-routeless", 1)
	routeless["tasks"].([]any)[1].(map[string]any)["taskRef"] = "routeless"
	f.must(t, http.StatusServiceUnavailable, editor, http.MethodPost, base, routeless)

	pinned := chain("remote-pinned", 1)
	pinned["tasks"].([]any)[1].(map[string]any)["taskVersion"] = 4
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, pinned)
	mu.Lock()
	assert.Contains(t, seen, "ref=http-request&version=4")
	mu.Unlock()

	// A tasks service that is down is the service's problem, not the caller's mistake.
	srv.Close()
	res = f.must(t, http.StatusServiceUnavailable, editor, http.MethodPost, base, chain("remote-down", 1))
	assert.Equal(t, "DEPENDENCY_UNAVAILABLE", res.body["reason"])
	static.Set("tasks")
	f.must(t, http.StatusServiceUnavailable, editor, http.MethodPost, base, chain("remote-gone", 1))
}
