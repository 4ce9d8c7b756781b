package workflowsapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/golden"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/workflowsapi"
)

// sampleTime is fixed so fixtures do not change from run to run.
var sampleTime = time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC)

func ptr[T any](v T) *T { return &v }

// sampleVersion has a member of every kind, unknown ones included at each level that
// keeps them.
func sampleVersion() workflowsapi.WorkflowVersion {
	on := &workflowsapi.Trigger{Enabled: true}
	return workflowsapi.WorkflowVersion{
		ID: "d2f1c0a9b8e7", Name: "build", DisplayName: "Build", Team: "platform", Status: "active", Version: 3,
		CreationDate: &workflowsapi.Time{Time: sampleTime},
		Changelog:    &workflowsapi.Changelog{Author: "Ada Lovelace", Reason: "faster", Date: &workflowsapi.Time{Time: sampleTime}},
		Icon:         "hammer", Description: "Builds it", Markdown: "# Build",
		Labels:      map[string]string{"tier": "1"},
		Annotations: map[string]json.RawMessage{"owner": json.RawMessage(`"platform"`)},
		Timeout:     ptr(60), Retries: ptr(1),
		Params: []param.Param{
			{Name: "branch", Label: "branch", Type: "text", Default: json.RawMessage(`"main"`)},
			{Name: "token", Label: "token", Type: "password", Default: json.RawMessage(`"s3cret"`)},
		},
		Workspaces: json.RawMessage(`[{"name":"src","type":"workflow"}]`),
		Triggers: &workflowsapi.Triggers{
			Manual: on, Codehost: on, Github: on,
			Webhook: &workflowsapi.Trigger{Enabled: true, Conditions: []workflowsapi.Condition{
				{Field: "$.ref", Operation: "equals", Value: "refs/heads/main"},
				{Field: "$.action", Operation: "in", Values: []string{"opened", "synchronize"}},
			}},
			Extra: map[string]json.RawMessage{"slack": json.RawMessage(`{"enabled":false}`)},
		},
		Tasks: []workflowsapi.Task{
			{Name: "start", Type: "start"},
			{
				Name: "compile", Type: "template", TaskRef: "platform/compile", TaskVersion: ptr(4),
				Timeout: ptr(10), Retries: ptr(2), RetryDelay: ptr(30), Join: "all",
				Dependencies: []workflowsapi.Dependency{{TaskRef: "start", ExecutionCondition: "success",
					Extra: map[string]json.RawMessage{"edgeId": json.RawMessage(`"e1"`)}}},
				Params:      []workflowsapi.TaskParam{{Name: "branch", Value: json.RawMessage(`"$(params.branch)"`)}},
				Results:     json.RawMessage(`[{"name":"artifact"}]`),
				Labels:      map[string]string{"lang": "go"},
				Annotations: map[string]json.RawMessage{"position": json.RawMessage(`{"x":1,"y":2}`)},
				Extra:       map[string]json.RawMessage{"designerNote": json.RawMessage(`"keep"`)},
			},
			{Name: "end", Type: "end", Dependencies: []workflowsapi.Dependency{{TaskRef: "compile",
				DecisionCondition: "ok\nfine"}}},
		},
		Extra: map[string]json.RawMessage{"designer": json.RawMessage(`{"zoom":1.5}`)},
	}
}

func goldenCases() []golden.Case {
	return []golden.Case{
		{Name: "team-usage", Value: workflowsapi.TeamUsage{CurrentWorkflowCount: 12}},
		{Name: "task-usage", Value: workflowsapi.TaskUsage{Workflows: []string{"build", "deploy"}}},
		{Name: "workflow-version", Value: sampleVersion()},
		{Name: "triggered-workflows", Value: workflowsapi.TriggeredWorkflows{Workflows: []workflowsapi.TriggeredWorkflow{
			{Name: "build", Status: "active", Version: 3, Trigger: workflowsapi.Trigger{Enabled: true, Conditions: []workflowsapi.Condition{
				{Field: "$.ref", Operation: "equals", Value: "refs/heads/main"}}}},
			{Name: "deploy", Status: "inactive", Version: 1, Trigger: workflowsapi.Trigger{Enabled: true}},
		}}},
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	golden.Check(t, goldenCases())
}

func TestNoStaleFixtures(t *testing.T) {
	t.Parallel()
	golden.NoStale(t, golden.Names(goldenCases()))
}

// A version read and written again is the same bytes, unknown members included.
func TestVersionRoundTrip(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(sampleVersion())
	require.NoError(t, err)
	var v workflowsapi.WorkflowVersion
	require.NoError(t, json.Unmarshal(raw, &v))
	again, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(raw), string(again))
}

func TestPaths(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/internal/v1/teams/a%20team/usage", workflowsapi.TeamUsagePath("a team"))
	assert.Equal(t, "/internal/v1/teams/infra/workflows/a%2Fb", workflowsapi.WorkflowVersionPath("infra", "a/b"))
	assert.Equal(t, "/internal/v1/teams/a%20team/triggers", workflowsapi.TriggersPath("a team"))
}

func TestTriggers(t *testing.T) {
	t.Parallel()
	self := auth.Principal{Type: auth.TypeService, ID: "integrations"}
	c := serve(t, self, map[string][2]string{
		"GET /internal/v1/teams/infra/triggers?kind=codehost":              {"200", `{"workflows":[{"name":"build","status":"active","version":2,"trigger":{"enabled":true}}]}`},
		"GET /internal/v1/teams/infra/triggers?kind=event&workflow=gone":   {"404", `{"status":404,"reason":"WORKFLOW_NOT_FOUND","message":"gone"}`},
		"GET /internal/v1/teams/infra/triggers?kind=event&workflow=deploy": {"500", `{}`},
	})
	got, err := c.Triggers(context.Background(), "infra", "codehost", "")
	require.NoError(t, err)
	assert.Equal(t, []workflowsapi.TriggeredWorkflow{{Name: "build", Status: "active", Version: 2, Trigger: workflowsapi.Trigger{Enabled: true}}}, got.Workflows)
	_, err = c.Triggers(context.Background(), "infra", "event", "gone")
	assert.True(t, apperr.HasReason(err, apperr.WorkflowNotFound), "%v", err)
	_, err = c.Triggers(context.Background(), "infra", "event", "deploy")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

// serve starts a fake workflows service answering "METHOD /escaped/path?query" from a
// table, checking that every request is signed by self.
func serve(t *testing.T, self auth.Principal, answers map[string][2]string) *workflowsapi.Client {
	t.Helper()
	signer, err := auth.NewSigner([]byte("workflowsapi-test-key-0123456789"))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		a, ok := answers[r.Method+" "+r.URL.EscapedPath()+"?"+r.URL.RawQuery]
		if !ok {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		status := map[string]int{"200": 200, "404": 404, "500": 500}[a[0]]
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(a[1]))
	}))
	t.Cleanup(srv.Close)
	return workflowsapi.New(registry.NewStatic(map[string][]string{workflowsapi.Service: {srv.URL}}), signer, self)
}

func TestTeamUsage(t *testing.T) {
	t.Parallel()
	c := serve(t, auth.Principal{Type: auth.TypeService, ID: "identity", Name: "identity"}, map[string][2]string{
		"GET /internal/v1/teams/infra/usage?":  {"200", `{"currentWorkflowCount": 4}`},
		"GET /internal/v1/teams/new/usage?":    {"404", `{"reason":"TEAM_NOT_FOUND"}`},
		"GET /internal/v1/teams/broken/usage?": {"500", `{}`},
	})
	tests := []struct {
		team       string
		want       int
		wantReason *apperr.Reason
	}{
		{"infra", 4, nil},
		{"new", 0, nil},
		{"broken", 0, &apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		got, err := c.TeamUsage(t.Context(), tt.team)
		if tt.wantReason != nil {
			assert.True(t, apperr.HasReason(err, *tt.wantReason), "%s: %v", tt.team, err)
			continue
		}
		require.NoError(t, err, tt.team)
		assert.Equal(t, tt.want, got.CurrentWorkflowCount, tt.team)
	}
}

func TestTaskUsage(t *testing.T) {
	t.Parallel()
	c := serve(t, auth.Principal{Type: auth.TypeService, ID: "tasks", Name: "tasks"}, map[string][2]string{
		"GET /internal/v1/task-usage?ref=infra%2Fbuild":   {"200", `{"workflows":["release"]}`},
		"GET /internal/v1/task-usage?ref=old%2Fbuild":     {"404", `{"status":404,"reason":"ROUTE_NOT_FOUND"}`},
		"GET /internal/v1/task-usage?ref=gone%2Fbuild":    {"404", `{"status":404,"reason":"TEAM_NOT_FOUND"}`},
		"GET /internal/v1/task-usage?ref=garbled%2Fbuild": {"200", `<html>`},
	})
	got, err := c.TaskUsage(t.Context(), "infra/build")
	require.NoError(t, err)
	assert.Equal(t, []string{"release"}, got.Workflows)
	_, err = c.TaskUsage(t.Context(), "old/build")
	assert.True(t, errors.Is(err, workflowsapi.ErrNoTaskUsage), "%v", err)
	for _, ref := range []string{"gone/build", "garbled/build"} {
		_, err = c.TaskUsage(t.Context(), ref)
		assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%s: %v", ref, err)
	}
}

func TestWorkflowVersion(t *testing.T) {
	t.Parallel()
	c := serve(t, auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}, map[string][2]string{
		"GET /internal/v1/teams/infra/workflows/build?version=3": {"200", `{"name":"build","version":3,"tasks":[{"name":"start","type":"start"}]}`},
		"GET /internal/v1/teams/infra/workflows/build?":          {"200", `{"name":"build","version":4}`},
		"GET /internal/v1/teams/infra/workflows/gone?":           {"404", `{"reason":"WORKFLOW_NOT_FOUND","message":"Workflow 'gone' was not found."}`},
	})
	got, err := c.WorkflowVersion(t.Context(), "infra", "build", 3)
	require.NoError(t, err)
	assert.Equal(t, workflowsapi.WorkflowVersion{Name: "build", Version: 3, Tasks: []workflowsapi.Task{{Name: "start", Type: "start"}}}, got)
	got, err = c.WorkflowVersion(t.Context(), "infra", "build", 0)
	require.NoError(t, err)
	assert.Equal(t, 4, got.Version)
	_, err = c.WorkflowVersion(t.Context(), "infra", "gone", 0)
	assert.True(t, apperr.HasReason(err, apperr.WorkflowNotFound), "%v", err)
	_, err = c.WorkflowVersion(t.Context(), "infra", "broken", 0)
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
	runnable, err := c.RunnableVersion(t.Context(), "infra", "build", 3)
	require.NoError(t, err)
	assert.Equal(t, workflowsapi.RunnableVersion{Name: "build", Version: 3, Tasks: []workflowsapi.RunnableTask{{Name: "start", Type: "start"}}}, runnable)
	_, err = c.RunnableVersion(t.Context(), "infra", "gone", 0)
	assert.True(t, apperr.HasReason(err, apperr.WorkflowNotFound), "%v", err)
}

// A runnable version reads from a version's answer the very values the whole version
// holds, for every member it names; its triggers are every trigger's state.
func TestRunnableVersionReadsTheVersion(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "workflow-version.json"))
	require.NoError(t, err)
	var whole workflowsapi.WorkflowVersion
	require.NoError(t, json.Unmarshal(raw, &whole))
	var got workflowsapi.RunnableVersion
	require.NoError(t, json.Unmarshal(raw, &got))

	want := workflowsapi.RunnableVersion{Name: whole.Name, DisplayName: whole.DisplayName, Team: whole.Team, Status: whole.Status,
		Version: whole.Version, Timeout: whole.Timeout, Retries: whole.Retries, Params: whole.Params, Workspaces: whole.Workspaces,
		Triggers: map[string]workflowsapi.RunnableTrigger{}}
	for name, tr := range map[string]*workflowsapi.Trigger{"manual": whole.Triggers.Manual, "schedule": whole.Triggers.Schedule,
		"webhook": whole.Triggers.Webhook, "event": whole.Triggers.Event, "codehost": whole.Triggers.Codehost, "github": whole.Triggers.Github} {
		if tr != nil {
			want.Triggers[name] = workflowsapi.RunnableTrigger{Enabled: tr.Enabled}
		}
	}
	for name, raw := range whole.Triggers.Extra {
		var tr workflowsapi.RunnableTrigger
		require.NoError(t, json.Unmarshal(raw, &tr))
		want.Triggers[name] = tr
	}
	for _, task := range whole.Tasks {
		rt := workflowsapi.RunnableTask{Name: task.Name, Type: task.Type, TaskRef: task.TaskRef, TaskVersion: task.TaskVersion,
			Timeout: task.Timeout, Retries: task.Retries, RetryDelay: task.RetryDelay, Join: task.Join, Params: task.Params,
			Results: task.Results, Labels: task.Labels}
		for _, d := range task.Dependencies {
			rt.Dependencies = append(rt.Dependencies, workflowsapi.RunnableDependency{TaskRef: d.TaskRef,
				ExecutionCondition: d.ExecutionCondition, DecisionCondition: d.DecisionCondition})
		}
		want.Tasks = append(want.Tasks, rt)
	}
	assert.Equal(t, want, got)
	assert.Len(t, got.Triggers, 5, "the fixture's triggers, one of them unknown to WorkflowVersion")
}
