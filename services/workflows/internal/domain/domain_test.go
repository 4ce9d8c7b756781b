package domain_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

func TestFindRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give         string
		wantRefs     []domain.Ref
		wantProblems int
	}{
		{"no references", nil, 0},
		{"$(params.branch)", []domain.Ref{{Prefix: "params.", Path: "branch"}}, 0},
		{`$(params.data["a.b"]) and $(params.list[0].name)`, []domain.Ref{{Prefix: "params.", Path: `data["a.b"]`}, {Prefix: "params.", Path: "list[0].name"}}, 0},
		{"$(global.params.region)$(team.params.t)", []domain.Ref{{Prefix: "global.params.", Path: "region"}, {Prefix: "team.params.", Path: "t"}}, 0},
		{"$(workflow.params.x) $(context.params.workflow-name)", []domain.Ref{{Prefix: "workflow.params.", Path: "x"}, {Prefix: "context.params.", Path: "workflow-name"}}, 0},
		{"$(tasks.build.results.image)", []domain.Ref{{Prefix: "tasks.", Task: "build", Path: "image"}}, 0},
		{"$(results.out.path)", []domain.Ref{{Prefix: "results.", Path: "out.path"}}, 0},
		{"$(date) $(pwd) $(echo hi)", nil, 0},
		{"$(echo $(params.who))", []domain.Ref{{Prefix: "params.", Path: "who"}}, 0},
		{"$(params.)", nil, 1},
		{"$(params.a b)", nil, 1},
		{"$(tasks.build.image)", nil, 1},
		{"$(tasks..results.x)", nil, 1},
		{"$(context.params.nope)", nil, 1},
		{"$(params.open", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			refs, problems := domain.FindRefs(tt.give)
			assert.Equal(t, tt.wantRefs, refs)
			assert.Len(t, problems, tt.wantProblems, "%v", problems)
		})
	}
}

// Unknown members survive a round trip at every level that keeps them; names matching a
// known field in another case are that field, not extras.
func TestWorkflowJSONKeepsUnknownMembers(t *testing.T) {
	t.Parallel()
	give := `{"name":"w","Description":"d","id":"old-id","zeta":{"deep":[1,2.50,"x"]},"alpha":null,
	"triggers":{"github":{"enabled":true},"slack":{"enabled":false}},
	"tasks":[{"name":"a","type":"script","ui":{"x":1},"dependencies":[{"taskRef":"s","label":"l"}]}]}`
	var w domain.Workflow
	require.NoError(t, json.Unmarshal([]byte(give), &w))
	assert.Equal(t, "d", w.Description)
	assert.NotContains(t, w.Extra, "id", "id is read-only and dropped")
	assert.NotContains(t, w.Extra, "Description")
	out, err := json.Marshal(w)
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"w","description":"d","zeta":{"deep":[1,2.50,"x"]},"alpha":null,
	"triggers":{"codehost":{"enabled":true},"github":{"enabled":true},"slack":{"enabled":false}},
	"tasks":[{"name":"a","type":"script","ui":{"x":1},"dependencies":[{"taskRef":"s","label":"l"}]}]}`, string(out))
	assert.Contains(t, string(out), `"zeta":{"deep":[1,2.50,"x"]}`, "extras are written byte for byte")
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	w := domain.Workflow{Triggers: &domain.Triggers{Github: &domain.Trigger{Enabled: true}}}
	w.Normalize()
	assert.Equal(t, domain.StatusActive, w.Status)
	assert.True(t, w.Triggers.Manual.On())
	assert.True(t, w.Triggers.Codehost.On())
	assert.Nil(t, w.Triggers.Github, "kept once, under codehost; written under both names")
}

func TestNames(t *testing.T) {
	t.Parallel()
	tests := []struct{ give, want string }{
		{"My Flow", "my-flow"},
		{"  Build_and-Deploy ", "build-and-deploy"},
		{"héllo wörld!", "hllo-wrld"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, domain.Slug(tt.give), tt.give)
	}
	long := "a123456789b123456789c123456789d123456789e123456789f123456789wxyz"
	copies := []struct {
		name string
		n    int
		want string
	}{
		{"deploy", 1, "deploy-copy"},
		{"deploy", 2, "deploy-copy-2"},
		{long, 1, long[:59] + "-copy"},
		{long, 12, long[:56] + "-copy-12"},
	}
	for _, tt := range copies {
		got := domain.CopyName(tt.name, tt.n)
		assert.Equal(t, tt.want, got)
		assert.LessOrEqual(t, len(got), domain.MaxNameLength)
	}
	_, err := domain.NewName("Query")
	assert.True(t, apperr.HasReason(err, apperr.WorkflowInvalidReq))
	assert.NoError(t, domain.SameName("my-flow", "My Flow"))
	assert.Error(t, domain.SameName("my-flow", "other"))
}

// A specific reason only when every problem is of its kind.
func TestInvalidReason(t *testing.T) {
	t.Parallel()
	name := domain.Problem{Field: "tasks[1].name", Kind: domain.ProblemTaskName}
	ref := domain.Problem{Field: "tasks[1].taskRef", Kind: domain.ProblemTaskRef}
	general := domain.Problem{Field: "tasks", Kind: domain.ProblemGeneral}
	tests := []struct {
		give []domain.Problem
		want apperr.Reason
	}{
		{[]domain.Problem{name, name}, apperr.WorkflowNonUniqueTaskName},
		{[]domain.Problem{ref}, apperr.WorkflowInvalidTaskRef},
		{[]domain.Problem{name, ref}, apperr.WorkflowInvalid},
		{[]domain.Problem{general}, apperr.WorkflowInvalid},
	}
	for _, tt := range tests {
		err := domain.Invalid(tt.give)
		assert.True(t, apperr.HasReason(err, tt.want), "%v: %v", tt.give, err)
		e, _ := apperr.As(err)
		assert.Len(t, e.Fields, len(tt.give))
	}
	assert.NoError(t, domain.Invalid(nil))
}

// The DAG checks scale: a 10,000-task chain with one cycle at its end is checked without
// recursion, and the cycle is reported once.
func TestValidateLargeGraph(t *testing.T) {
	t.Parallel()
	const n = 10_000
	w := domain.Workflow{Name: "big", Tasks: []domain.Task{{Name: "start", Type: "start"}}}
	prev := "start"
	for i := range n {
		name := fmt.Sprintf("t%d", i)
		w.Tasks = append(w.Tasks, domain.Task{Name: name, Type: "sleep", Dependencies: []domain.Dependency{{TaskRef: prev}},
			Params: []domain.TaskParam{{Name: "duration", Value: json.RawMessage(`"5"`)}}})
		prev = name
	}
	w.Tasks = append(w.Tasks, domain.Task{Name: "end", Type: "end", Dependencies: []domain.Dependency{{TaskRef: prev}}})
	assert.Empty(t, domain.Validate(&w, domain.ValidateOptions{Team: "t"}))

	// t9998 now also waits for t9999, which waits for it.
	w.Tasks[n-1].Dependencies = append(w.Tasks[n-1].Dependencies, domain.Dependency{TaskRef: fmt.Sprintf("t%d", n-1)})
	problems := domain.Validate(&w, domain.ValidateOptions{Team: "t"})
	require.Len(t, problems, 1, "%v", problems)
	assert.Equal(t, domain.Problem{Field: fmt.Sprintf("tasks[%d].dependencies", n-1), Message: "tasks t9998 → t9999 form a cycle"}, problems[0])
}

func TestCatalogKeepsOrderAndPages(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	entry := func(name string, minute int, status domain.Status, labels map[string]string) domain.Entry {
		return domain.Entry{Name: name, Latest: 1, Status: status, Labels: labels, CreationDate: base.Add(time.Duration(minute) * time.Minute)}
	}
	c := domain.NewCatalog(3, []domain.Entry{
		entry("c", 3, "active", nil), entry("a", 1, "active", map[string]string{"env": "prod"}), entry("b", 2, "inactive", nil),
	})
	next := c.Next()
	next.Put(entry("d", 0, "active", map[string]string{"env": "prod"}))
	next.Put(entry("a", 1, "inactive", map[string]string{"env": "prod"}))
	next.Remove("b")
	next.Remove("missing")
	assert.EqualValues(t, 4, next.Seq)
	assert.Equal(t, 3, c.Len(), "the published catalog is untouched")

	names := func(es []domain.Entry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	assert.Equal(t, []string{"d", "a", "c"}, names(next.Entries()))
	tests := []struct {
		name      string
		filter    domain.Filter
		req       page.Request
		want      []string
		wantTotal int64
	}{
		{"all", domain.Filter{}, page.Request{Size: 10}, []string{"d", "a", "c"}, 3},
		{"descending", domain.Filter{}, page.Request{Size: 10, Desc: true}, []string{"c", "a", "d"}, 3},
		{"second page", domain.Filter{}, page.Request{Number: 1, Size: 2}, []string{"c"}, 3},
		{"labels", domain.Filter{Labels: map[string]string{"env": "prod"}}, page.Request{Size: 10}, []string{"d", "a"}, 2},
		{"statuses and names", domain.Filter{Statuses: []string{"inactive"}, Names: []string{"a", "c"}}, page.Request{Size: 10}, []string{"a"}, 1},
	}
	for _, tt := range tests {
		got, total := next.Find(tt.filter, tt.req)
		assert.Equal(t, tt.want, names(got), tt.name)
		assert.Equal(t, tt.wantTotal, total, tt.name)
	}
}

func TestSecretsKeptAndMasked(t *testing.T) {
	t.Parallel()
	stored := []domain.Param{{Name: "token", Type: "password", Default: json.RawMessage(`"s3cret"`)}}
	tests := []struct {
		name string
		give json.RawMessage
		prev []domain.Param
		want json.RawMessage
	}{
		{"mask keeps the stored value", json.RawMessage(`"********"`), stored, json.RawMessage(`"s3cret"`)},
		{"a new value replaces it", json.RawMessage(`"n3w"`), stored, json.RawMessage(`"n3w"`)},
		{"mask with nothing stored is no value", json.RawMessage(`"********"`), nil, nil},
	}
	for _, tt := range tests {
		w := domain.Workflow{Params: []domain.Param{{Name: "token", Type: "password", Default: tt.give}}}
		if w.HasMaskedSecrets() {
			w.KeepSecrets(tt.prev)
		}
		assert.Equal(t, string(tt.want), string(w.Params[0].Default), tt.name)
		w.MaskSecrets()
		if tt.want != nil {
			assert.Equal(t, `"********"`, string(w.Params[0].Default), tt.name)
		}
	}
}

// workflow → canvas → workflow is the identity, and so is canvas → workflow → canvas for
// ids and types the conversion would not derive.
func TestCanvasConversion(t *testing.T) {
	t.Parallel()
	give := `{"name":"w","params":[{"name":"p","key":"p","label":"p","required":false,"readOnly":false,"hiddenValue":false}],"tasks":[
	{"name":"start","type":"start","annotations":{"baton.io/position":{"x":1,"y":2}}},
	{"name":"d","type":"decision","params":[{"name":"value","value":"x"}],"dependencies":[{"taskRef":"start"}],"x-extra":true},
	{"name":"end","type":"end","dependencies":[{"taskRef":"d","decisionCondition":"a|b","baton.io/edge-id":"e9","note":"n"}],
	 "annotations":{"baton.io/node-id":"n-end","keep":"me"}}]}`
	var w domain.Workflow
	require.NoError(t, json.Unmarshal([]byte(give), &w))
	c, err := domain.ToCanvas(w)
	require.NoError(t, err)
	assert.Equal(t, "n-end", c.Nodes[2].ID)
	assert.Equal(t, map[string]json.RawMessage{"keep": json.RawMessage(`"me"`)}, decodeAnnotations(t, c.Nodes[2].Data["annotations"]))
	require.Len(t, c.Edges, 2)
	assert.Equal(t, domain.Edge{ID: "e9", Source: "d", Target: "n-end", Type: "decision",
		Data: map[string]json.RawMessage{"decisionCondition": json.RawMessage(`"a|b"`), "note": json.RawMessage(`"n"`)}}, c.Edges[1])

	raw, err := json.Marshal(c)
	require.NoError(t, err)
	var back domain.Canvas
	require.NoError(t, json.Unmarshal(raw, &back))
	w2, problems := domain.FromCanvas(back)
	require.Empty(t, problems)
	again, err := json.Marshal(w2)
	require.NoError(t, err)
	assert.JSONEq(t, give, string(again))
}

func decodeAnnotations(t *testing.T, raw json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}
