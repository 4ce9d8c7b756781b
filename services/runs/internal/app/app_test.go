package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/app"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

// The use cases on the in-memory store, with the other services faked: what a caller of
// the runs service sees, without a database or a broker.

type definitions map[string]*domain.Definition

func (d definitions) Snapshot(_ context.Context, _, name string, _ int) (*domain.Definition, error) {
	def, ok := d[name]
	if !ok {
		return nil, apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found.", name)
	}
	raw, _ := json.Marshal(def)
	var c domain.Definition
	_ = json.Unmarshal(raw, &c)
	return &c, nil
}

type noCatalogue struct{}

func (noCatalogue) TaskSpec(context.Context, string, int) (*domain.Spec, int, error) {
	return nil, 0, apperr.New(apperr.TaskNotFound, "no catalogue here")
}

type contexts struct{ tc app.TeamContext }

func (c contexts) RunContext(context.Context, string) (app.TeamContext, error) { return c.tc, nil }

type published struct {
	mu   sync.Mutex
	msgs []engine.Message
}

func (p *published) Publish(_ context.Context, msgs []engine.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, msgs...)
	return nil
}

func (p *published) dispatched(run string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.msgs {
		if m.Topic == events.TaskDispatch && m.Key == run {
			return true
		}
	}
	return false
}

func param(name string, v any) domain.TaskParam {
	raw, _ := json.Marshal(v)
	return domain.TaskParam{Name: name, Value: raw}
}

// newApp runs the use cases over an empty store, for team "infra" with limits tc.
func newApp(t *testing.T, tc app.TeamContext) (*app.App, *published) {
	t.Helper()
	s := memstore.New()
	return newAppOver(t, tc, app.Stores{Runs: s, Quotas: s, Keys: s, Heartbeats: s, Logs: s, Replicas: s, Actions: s, Locks: s, Queues: s})
}

// newAppOver runs the use cases over stores, for team "infra" with limits tc.
func newAppOver(t *testing.T, tc app.TeamContext, stores app.Stores) (*app.App, *published) {
	t.Helper()
	dep := []domain.Dependency{{TaskRef: "start"}}
	defs := definitions{
		"inline": {Name: "inline", Tasks: []domain.TaskDef{{Name: "start", Type: tasktype.Start},
			{Name: "end", Type: tasktype.End, Dependencies: dep}}},
		"approve": {Name: "approve", Tasks: []domain.TaskDef{{Name: "start", Type: tasktype.Start},
			{Name: "ok", Type: tasktype.Approval, Params: []domain.TaskParam{param("numberOfApprovers", 2)}, Dependencies: dep},
			{Name: "end", Type: tasktype.End, Dependencies: []domain.Dependency{{TaskRef: "ok"}}}}},
		"script": {Name: "script", Tasks: []domain.TaskDef{{Name: "start", Type: tasktype.Start},
			{Name: "work", Type: tasktype.Script, Params: []domain.TaskParam{param("script", "true")}, Dependencies: dep},
			{Name: "end", Type: tasktype.End, Dependencies: []domain.Dependency{{TaskRef: "work"}}}}},
	}
	pub := &published{}
	a := app.New(app.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, app.Deps{
		Stores:    stores,
		Publisher: pub, Definitions: defs, Catalogue: noCatalogue{}, Contexts: contexts{tc},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = a.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return a, pub
}

var limits = app.TeamContext{MaxMonthly: 100, MaxDuration: 60, MaxConcurrent: 10, TaskDefaultTimeout: 10}

func submit(t *testing.T, a *app.App, workflow, key string, start bool) (app.RunView, bool, error) {
	t.Helper()
	return a.Submit(context.Background(), app.Submission{Team: "infra", Workflow: workflow, Key: key, Start: start,
		Trigger: "manual", By: domain.Initiator{Type: "user", ID: "u1", Name: "Ada"}})
}

func TestSubmit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		limits     app.TeamContext
		workflow   string
		wantReason apperr.Reason
		wantStatus string
	}{
		{"an inline run ends within its submit", limits, "inline", apperr.Reason{}, "succeeded"},
		{"a run with runner work is running", limits, "script", apperr.Reason{}, "running"},
		{"an unknown workflow", limits, "nope", apperr.WorkflowNotFound, ""},
		{"no runs left this month", app.TeamContext{MaxConcurrent: 10}, "inline", apperr.QuotaExceeded, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, _ := newApp(t, tt.limits)
			v, created, err := submit(t, a, tt.workflow, "", true)
			if tt.wantReason != (apperr.Reason{}) {
				assert.True(t, apperr.HasReason(err, tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.True(t, created)
			assert.Equal(t, tt.wantStatus, v.Status)
			assert.Equal(t, "Ada", v.InitiatedByUserName)
		})
	}
}

func TestSubmitIsIdempotentByKey(t *testing.T) {
	t.Parallel()
	a, _ := newApp(t, limits)
	first, created, err := submit(t, a, "script", "release-42", true)
	require.NoError(t, err)
	require.True(t, created)
	again, created, err := submit(t, a, "script", "release-42", true)
	require.NoError(t, err)
	assert.False(t, created, "the key names the first run")
	assert.Equal(t, first.ID, again.ID)
	other, created, err := submit(t, a, "script", "release-43", true)
	require.NoError(t, err)
	assert.True(t, created)
	assert.NotEqual(t, first.ID, other.ID)
}

func TestStartWithoutAFreeSlot(t *testing.T) {
	t.Parallel()
	one := limits
	one.MaxConcurrent = 1
	a, _ := newApp(t, one)
	_, _, err := submit(t, a, "script", "", true)
	require.NoError(t, err)
	queued, _, err := submit(t, a, "script", "", false)
	require.NoError(t, err)
	_, err = a.Start(context.Background(), "infra", queued.ID, domain.SubmitRequest{})
	assert.True(t, apperr.HasReason(err, apperr.QuotaExceeded), "%v", err)
	v, err := a.GetTeamRun(context.Background(), "infra", queued.ID, false)
	require.NoError(t, err)
	assert.Equal(t, "queued", v.Phase, "the run stays queued")
	_, err = a.GetTeamRun(context.Background(), "other", queued.ID, false)
	assert.True(t, apperr.HasReason(err, apperr.WorkflowRunNotFound), "another team's run is not found: %v", err)
}

// A runner claims an attempt once, beats while it runs it, and reports its log and end.
func TestRunnerClaimsBeatsAndReports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, pub := newApp(t, limits)
	v, _, err := submit(t, a, "script", "", true)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pub.dispatched(v.ID) }, 5*time.Second, time.Millisecond)
	work := domain.TaskRunID(v.ID, 1)

	claimed, err := a.Claim(ctx, work, 1, "r1")
	require.NoError(t, err)
	assert.True(t, claimed)
	claimed, err = a.Claim(ctx, work, 1, "r2")
	require.NoError(t, err)
	assert.False(t, claimed, "an attempt is claimed once")
	cancel, ok, err := a.Heartbeat(ctx, work, 1, "r1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.False(t, cancel)
	_, ok, err = a.Heartbeat(ctx, work, 1, "r2")
	require.NoError(t, err)
	assert.False(t, ok, "not r2's attempt")
	_, err = a.Claim(ctx, v.ID+".9", 1, "r1")
	assert.True(t, apperr.HasReason(err, apperr.TaskRunNotFound), "%v", err)

	require.NoError(t, a.Report(ctx, events.TaskUpdate{TaskRunID: work, RunID: v.ID, Attempt: 1, Kind: events.UpdateLog, Seq: 0, Log: "hello\n"}))
	require.NoError(t, a.Report(ctx, events.TaskUpdate{TaskRunID: work, RunID: v.ID, Attempt: 1, Kind: events.UpdateEnded,
		Status: "succeeded", Results: map[string]string{"out": "42"}}))
	require.Eventually(t, func() bool {
		got, err := a.GetTeamRun(ctx, "infra", v.ID, true)
		return err == nil && got.Status == "succeeded"
	}, 5*time.Second, time.Millisecond)
	src, err := a.TaskLog(ctx, work)
	require.NoError(t, err)
	assert.True(t, src.Ended)
	text, _, err := a.ReadLog(ctx, work, src.Attempts, domain.LogCursor{})
	require.NoError(t, err)
	assert.Equal(t, "hello\n", text)
}

// What deleting a workflow or a team asks first, and a deleted team's runs going.
func TestActiveRunsAndTeamDeletion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := newApp(t, limits)
	running, _, err := submit(t, a, "script", "", true)
	require.NoError(t, err)
	done, _, err := submit(t, a, "inline", "", true)
	require.NoError(t, err)
	n, err := a.ActiveRuns(ctx, "infra", "script")
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	n, err = a.ActiveRuns(ctx, "infra", "inline")
	require.NoError(t, err)
	assert.Zero(t, n)

	require.Eventually(t, func() bool { return a.DeleteTeam(ctx, "infra") == nil }, 5*time.Second, 5*time.Millisecond,
		"a team's runs are cancelled, then removed once put away")
	for _, id := range []string{running.ID, done.ID} {
		_, err := a.GetTeamRun(ctx, "infra", id, false)
		assert.True(t, apperr.HasReason(err, apperr.WorkflowRunNotFound), "%s: %v", id, err)
	}
}
