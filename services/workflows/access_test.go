package workflows_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/auth"
)

// Every endpoint enforces `workflow/<action>`: readers read, editors write, owners delete,
// other teams see nothing, and a workflow token reaches its own workflow only.
func TestAuthorization(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	f.must(t, http.StatusCreated, owner, http.MethodPost, base, chain("guarded", 1))
	f.must(t, http.StatusCreated, owner, http.MethodPost, base, chain("neighbour", 1))

	workflowToken := auth.Principal{Type: auth.TypeWorkflow, ID: "infra/guarded", Team: "infra", Workflow: "guarded",
		TokenID: "t1", Permissions: []string{"workflow/read"}}
	teamToken := auth.Principal{Type: auth.TypeTeam, ID: "infra", Team: "infra", TokenID: "t2", Permissions: []string{"workflow/read"}}
	operator := auth.Principal{Type: auth.TypeUser, ID: "u-op", Roles: []string{auth.RoleOperator}}
	body := chain("guarded", 2)
	canvas := map[string]any{"nodes": []any{}, "edges": []any{}}
	tests := []struct {
		name     string
		who      auth.Principal
		method   string
		path     string
		body     any
		wantCode int
	}{
		{"reader reads", reader, http.MethodGet, base + "/guarded", nil, 200},
		{"reader queries", reader, http.MethodGet, base + "/query", nil, 200},
		{"reader exports", reader, http.MethodGet, base + "/guarded/export", nil, 200},
		{"reader reads the changelog", reader, http.MethodGet, base + "/guarded/changelog", nil, 200},
		{"reader reads the canvas", reader, http.MethodGet, base + "/guarded/compose", nil, 200},
		{"reader cannot create", reader, http.MethodPost, base, chain("mine", 1), 403},
		{"reader cannot put", reader, http.MethodPut, base, body, 403},
		{"reader cannot put a canvas", reader, http.MethodPut, base + "/guarded/compose", canvas, 403},
		{"reader cannot duplicate", reader, http.MethodPost, base + "/guarded/duplicate", nil, 403},
		{"reader cannot delete", reader, http.MethodDelete, base + "/guarded", nil, 403},
		{"editor cannot delete", editor, http.MethodDelete, base + "/neighbour", nil, 403},
		{"another team cannot read", outsider, http.MethodGet, base + "/guarded", nil, 403},
		{"another team cannot query", outsider, http.MethodGet, base + "/query", nil, 403},
		{"another team cannot write", outsider, http.MethodPut, base, body, 403},
		{"another team cannot delete", outsider, http.MethodDelete, base + "/guarded", nil, 403},
		{"another team cannot list parameters", outsider, http.MethodGet, base + "/guarded/available-parameters", nil, 403},
		{"workflow token reads its workflow", workflowToken, http.MethodGet, base + "/guarded", nil, 200},
		{"workflow token cannot read another", workflowToken, http.MethodGet, base + "/neighbour", nil, 403},
		{"workflow token cannot query the team", workflowToken, http.MethodGet, base + "/query", nil, 403},
		{"team token reads", teamToken, http.MethodGet, base + "/neighbour", nil, 200},
		{"team token without write cannot write", teamToken, http.MethodPut, base, body, 403},
		{"operator writes", operator, http.MethodPut, base, body, 200},
		{"operator cannot delete", operator, http.MethodDelete, base + "/neighbour", nil, 403},
		{"admin of an unknown team", admin, http.MethodGet, "/api/v2/team/ghosts/workflow/query", nil, 404},
		{"unknown workflow", reader, http.MethodGet, base + "/ghost", nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t, tt.who, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.wantCode, res.code, string(res.raw))
			if tt.wantCode == 403 {
				assert.Equal(t, "PERMISSION_DENIED", res.body["reason"])
			}
		})
	}

	t.Run("no service credential", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, base+"/guarded", nil)
		resp, err := f.app.Test(req, -1)
		require.NoError(t, err)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	})
}

// Queries filter by labels, statuses and names, order by creation date either way, and
// page with exact totals.
func TestQuery(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	for i, spec := range []struct{ name, env, status string }{
		{"alpha", "prod", "active"}, {"bravo", "dev", "active"}, {"charlie", "prod", "inactive"},
		{"delta", "prod", "active"}, {"echo", "dev", "inactive"},
	} {
		body := chain(spec.name, i+1)
		body["labels"] = map[string]any{"env": spec.env}
		body["status"] = spec.status
		f.must(t, http.StatusCreated, editor, http.MethodPost, base, body)
	}
	tests := []struct {
		name      string
		query     string
		wantCode  int
		wantNames []string
		wantTotal float64
		wantPages float64
	}{
		{"creation order by default", "", 200, []string{"alpha", "bravo", "charlie", "delta", "echo"}, 5, 1},
		{"newest first", "?sort=DESC", 200, []string{"echo", "delta", "charlie", "bravo", "alpha"}, 5, 1},
		{"labels", "?labels=env%3Dprod", 200, []string{"alpha", "charlie", "delta"}, 3, 1},
		{"statuses", "?statuses=inactive", 200, []string{"charlie", "echo"}, 2, 1},
		{"names", "?workflows=delta,alpha,zulu", 200, []string{"alpha", "delta"}, 2, 1},
		{"all filters", "?labels=env%3Dprod&statuses=active&workflows=alpha,charlie", 200, []string{"alpha"}, 1, 1},
		{"unknown status matches nothing", "?statuses=archived", 200, []string{}, 0, 0},
		{"second page keeps the exact total", "?limit=2&page=1", 200, []string{"charlie", "delta"}, 5, 3},
		{"last page", "?limit=2&page=2&sort=desc", 200, []string{"alpha"}, 5, 3},
		{"page past the end", "?limit=2&page=9", 200, []string{}, 5, 3},
		{"limit too large", "?limit=1001", 400, nil, 0, 0},
		{"bad sort", "?sort=sideways", 400, nil, 0, 0},
		{"bad labels", "?labels=env", 400, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.must(t, tt.wantCode, reader, http.MethodGet, base+"/query"+tt.query, nil)
			if tt.wantCode != 200 {
				assert.Equal(t, "QUERY_INVALID_FILTERS", res.body["reason"])
				return
			}
			content := res.body["content"].([]any)
			assert.Equal(t, tt.wantNames, names(content, "name"))
			assert.Equal(t, tt.wantTotal, res.body["totalElements"])
			assert.Equal(t, tt.wantPages, res.body["totalPages"])
			for _, c := range content {
				assert.NotContains(t, c, "tasks", "query content leaves tasks out")
			}
		})
	}
}

// A duplicate copies the latest version under the first free `-copy` name.
func TestDuplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	body := chain("deploy", 2)
	body["displayName"] = "Deploy"
	body["triggers"] = map[string]any{"schedule": map[string]any{"enabled": true}}
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, body)
	f.must(t, http.StatusOK, editor, http.MethodPut, base, chain("deploy", 3))

	first := f.must(t, http.StatusCreated, editor, http.MethodPost, base+"/deploy/duplicate", nil)
	assert.Equal(t, "deploy-copy", first.body["name"])
	assert.Equal(t, base+"/deploy-copy", first.header.Get("Location"))
	assert.EqualValues(t, 1, first.body["version"])
	assert.Len(t, first.body["tasks"], 5, "the latest version is copied")
	assert.Equal(t, map[string]any{"enabled": true, "conditions": []any{}}, first.body["triggers"].(map[string]any)["manual"])
	second := f.must(t, http.StatusCreated, editor, http.MethodPost, base+"/deploy/duplicate", nil)
	assert.Equal(t, "deploy-copy-2", second.body["name"])
	third := f.must(t, http.StatusCreated, editor, http.MethodPost, base+"/deploy-copy/duplicate", nil)
	assert.Equal(t, "deploy-copy-copy", third.body["name"])
	f.must(t, http.StatusNotFound, editor, http.MethodPost, base+"/ghost/duplicate", nil)
}

// An export is a download of the latest version that POST and PUT import unchanged, in the
// same team or another; read-only fields in it are ignored.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	body := chain("release", 3)
	body["description"] = "Ships it"
	body["labels"] = map[string]any{"tier": "1"}
	body["params"] = []any{map[string]any{"name": "target", "type": "select", "options": []any{map[string]any{"key": "a", "value": "A"}}}}
	body["triggers"] = map[string]any{"github": map[string]any{"enabled": true, "conditions": []any{map[string]any{"field": "$.ref", "operation": "matches", "value": "refs/heads/.*"}}}}
	body["x-designer"] = map[string]any{"grid": true}
	f.must(t, http.StatusCreated, owner, http.MethodPost, base, body)

	exp := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/release/export", nil)
	assert.Equal(t, `attachment; filename="release.json"`, exp.header.Get("Content-Disposition"))
	assert.Contains(t, exp.header.Get("Content-Type"), "application/json")
	assert.Equal(t, "infra", exp.body["team"])
	triggers := exp.body["triggers"].(map[string]any)
	assert.Equal(t, triggers["codehost"], triggers["github"], "github is an alias of codehost, both are returned")

	// Into another team, by its owner: the same definition, a new version 1 there.
	imported := f.must(t, http.StatusCreated, outsider, http.MethodPost, "/api/v2/team/other/workflow", exp.raw).body
	assert.Equal(t, "other", imported["team"])
	assert.EqualValues(t, 1, imported["version"])
	assert.Equal(t, definition(exp.body), definition(imported))

	// Back into the same team with PUT: the same definition, so no new version.
	again := f.must(t, http.StatusOK, owner, http.MethodPut, base, exp.raw).body
	assert.EqualValues(t, 1, again["version"], "an export put back is the workflow as it is")
	assert.Equal(t, definition(exp.body), definition(again))

	// The v4 path finds the workflow among the caller's teams; a name two of them hold is
	// ambiguous for someone seeing both.
	legacy := f.must(t, http.StatusOK, reader, http.MethodGet, "/api/v2/workflow/release/export", nil)
	assert.Equal(t, `attachment; filename="release.json"`, legacy.header.Get("Content-Disposition"))
	assert.Equal(t, "infra", legacy.body["team"])
	assert.Equal(t, "other", f.must(t, http.StatusOK, outsider, http.MethodGet, "/api/v2/workflow/release/export", nil).body["team"])
	res := f.must(t, http.StatusBadRequest, admin, http.MethodGet, "/api/v2/workflow/release/export", nil)
	assert.Contains(t, res.body["message"], "infra, other")
	f.must(t, http.StatusOK, admin, http.MethodGet, "/api/v2/workflow/other%2Frelease/export", nil)
	f.must(t, http.StatusNotFound, reader, http.MethodGet, "/api/v2/workflow/ghost/export", nil)
}

// definition drops what a save sets itself.
func definition(w map[string]any) string {
	out := map[string]any{}
	for k, v := range w {
		switch k {
		case "id", "team", "version", "creationDate", "changelog":
		default:
			out[k] = v
		}
	}
	raw, _ := json.Marshal(out)
	return string(raw)
}

// Unknown fields of workflows, tasks and dependencies are kept and echoed; password
// parameters never leave in clear.
func TestUnknownFieldsAndSecrets(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	body := `{"name":"extras","owner":{"team":"sre","pager":7},"params":[{"name":"token","type":"password","default":"s3cret"}],
	"tasks":[{"name":"start","type":"start","color":"green"},
	{"name":"a","type":"script","params":[{"name":"script","value":"echo"}],"dependencies":[{"taskRef":"start","label":"go","weight":2.5}],"ui":{"collapsed":true}},
	{"name":"end","type":"end","dependencies":[{"taskRef":"a"}]}]}`
	w := f.must(t, http.StatusCreated, editor, http.MethodPost, base, body).body
	assert.Equal(t, map[string]any{"team": "sre", "pager": float64(7)}, w["owner"])
	tasks := w["tasks"].([]any)
	assert.Equal(t, "green", tasks[0].(map[string]any)["color"])
	a := tasks[1].(map[string]any)
	assert.Equal(t, map[string]any{"collapsed": true}, a["ui"])
	assert.Equal(t, []any{map[string]any{"taskRef": "start", "label": "go", "weight": 2.5}}, a["dependencies"])
	p := w["params"].([]any)[0].(map[string]any)
	assert.Equal(t, "********", p["default"])
	assert.NotContains(t, f.must(t, http.StatusOK, reader, http.MethodGet, base+"/extras/export", nil).raw, []byte("s3cret"))

	// Sending the mask back keeps the stored value; a duplicate copies it, still masked.
	back := strings.Replace(body, `"default":"s3cret"`, `"default":"********"`, 1)
	f.must(t, http.StatusOK, editor, http.MethodPut, base+"?replace=true", back)
	dup := f.must(t, http.StatusCreated, editor, http.MethodPost, base+"/extras/duplicate", nil)
	assert.Equal(t, "********", dup.body["params"].([]any)[0].(map[string]any)["default"])
	assert.NotContains(t, string(dup.raw), "s3cret")

	// At rest the value is sealed, in every revision; the runs service still reads it.
	names, err := f.db.ListCollectionNames(context.Background(), bson.M{})
	require.NoError(t, err)
	for _, name := range names {
		cur, err := f.db.Collection(name).Find(context.Background(), bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(context.Background(), &docs))
		for _, d := range docs {
			if def, ok := d["def"].(bson.Binary); ok {
				var w map[string]any
				require.NoError(t, json.Unmarshal(unzstd(t, def.Data), &w))
				if params, ok := w["params"].([]any); ok && len(params) > 0 {
					assert.True(t, strings.HasPrefix(params[0].(map[string]any)["default"].(string), "enc:v1:"), name)
				}
			}
			raw, err := bson.MarshalExtJSON(d, false, false)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), "s3cret", name)
		}
	}
	svc := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	snap := f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/extras-copy", nil).body
	assert.Equal(t, "s3cret", snap["params"].([]any)[0].(map[string]any)["default"])
}

// unzstd decompresses a stored body.
func unzstd(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	require.NoError(t, err)
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	require.NoError(t, err)
	return out
}

// available-parameters lists every layer's parameters by name and the results of the
// workflow's tasks, those their catalogue tasks declare included.
func TestAvailableParameters(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	body := chain("params", 1)
	body["params"] = []any{map[string]any{"name": "branch"}}
	tasks := body["tasks"].([]any)
	tasks[1].(map[string]any)["results"] = []any{map[string]any{"name": "duration"}}
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, body)

	got := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/params/available-parameters", nil).list
	var list []string
	for _, s := range got {
		list = append(list, s.(string))
	}
	for _, want := range []string{
		"params.branch", "params.region", "params.infra-token", "workflow.params.branch", "global.params.region",
		"team.params.infra-token", "context.params.workflowrun-ref", "context.params.callback-token",
		"tasks.step-1.results.body", "tasks.step-1.results.duration", "tasks.step-1.results.status",
	} {
		assert.Contains(t, list, want)
	}
	for _, s := range list {
		assert.False(t, strings.HasPrefix(s, "$("), s)
	}
	assert.Equal(t, len(list), len(dedupe(list)), fmt.Sprint(list))
}

func dedupe(in []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range in {
		out[s] = true
	}
	return out
}

// The integrations service asks which workflows a trigger kind starts: all of a team's
// whose trigger is on (github read as codehost), or one named, enabled or not.
func TestTriggeredWorkflows(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	withTriggers := func(name string, triggers map[string]any) map[string]any {
		b := chain(name, 1)
		b["triggers"] = triggers
		return b
	}
	cond := []any{map[string]any{"field": "$.ref", "operation": "equals", "value": "refs/heads/main"}}
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, withTriggers("push", map[string]any{"github": map[string]any{"enabled": true, "conditions": cond}}))
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, withTriggers("events", map[string]any{"event": map[string]any{"enabled": true}, "manual": map[string]any{"enabled": false}}))
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, withTriggers("plain", nil))

	svc := auth.Principal{Type: auth.TypeService, ID: "integrations", Name: "integrations"}
	got := f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=codehost", nil).body
	assert.Equal(t, []any{map[string]any{"name": "push", "status": "active", "version": float64(1),
		"trigger": map[string]any{"enabled": true, "conditions": cond}}}, got["workflows"])
	got = f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=manual", nil).body
	names := []string{}
	for _, w := range got["workflows"].([]any) {
		names = append(names, w.(map[string]any)["name"].(string))
	}
	assert.Equal(t, []string{"plain", "push"}, names, "the manual trigger is on unless turned off")
	got = f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=webhook&workflow=events", nil).body
	assert.Equal(t, []any{map[string]any{"name": "events", "status": "active", "version": float64(1), "trigger": map[string]any{"enabled": false}}}, got["workflows"])

	f.must(t, http.StatusNotFound, svc, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=event&workflow=gone", nil)
	f.must(t, http.StatusBadRequest, svc, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=slack", nil)
	f.must(t, http.StatusForbidden, editor, http.MethodGet, "/internal/v1/teams/infra/triggers?kind=event", nil)
}
