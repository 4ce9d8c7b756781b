package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/memstore"
)

func intp(n int) *int { return &n }

// The DAG rules as the engine carries them out: what runners are sent, in which order, and
// how their ends move the run.
func TestEngineDAG(t *testing.T) {
	t.Parallel()
	type end struct {
		task   string
		status domain.Status
	}
	tests := []struct {
		name  string
		tasks []domain.TaskDef
		// ends are the runners' answers, in order; each task is dispatched before it ends.
		ends []end
		want string
		run  domain.Status
	}{
		{
			name:  "a chain of scripts runs in order",
			tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("a", "start"), script("b", "a"), task("end", tasktype.End, nil, "b")},
			ends:  []end{{"a", domain.Succeeded}, {"b", domain.Succeeded}},
			want:  "start=succeeded a=succeeded b=succeeded end=succeeded",
			run:   domain.Succeeded,
		},
		{
			name: "a failed script takes its failure branch and fails the run",
			tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("a", "start"), script("b", "a:success"),
				script("onfail", "a:failure"), task("end", tasktype.End, nil, "b")},
			ends: []end{{"a", domain.Failed}, {"onfail", domain.Succeeded}},
			want: "start=succeeded a=failed b=skipped onfail=succeeded end=skipped",
			run:  domain.Failed,
		},
		{
			name: "a join waits for every branch",
			tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("a", "start"), script("b", "start"),
				script("c", "a", "b"), task("end", tasktype.End, nil, "c")},
			ends: []end{{"b", domain.Succeeded}, {"a", domain.Succeeded}, {"c", domain.Succeeded}},
			want: "start=succeeded a=succeeded b=succeeded c=succeeded end=succeeded",
			run:  domain.Succeeded,
		},
		{
			name: "a decision sends one branch to the runners",
			tasks: []domain.TaskDef{task("start", tasktype.Start, nil), task("d", tasktype.Decision, map[string]any{"value": "blue"}, "start"),
				script("blue", "d:always:bl.*"), script("other", "d"), task("end", tasktype.End, nil, "blue", "other")},
			ends: []end{{"blue", domain.Succeeded}},
			want: "start=succeeded d=succeeded blue=succeeded other=skipped end=succeeded",
			run:  domain.Succeeded,
		},
		{
			name:  "a cancelled attempt is not retried",
			tasks: []domain.TaskDef{task("start", tasktype.Start, nil), withRetries(script("a", "start"), 3), task("end", tasktype.End, nil, "a")},
			ends:  []end{{"a", domain.Cancelled}},
			want:  "start=succeeded a=cancelled end=succeeded",
			run:   domain.Failed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			e := h.start("a")
			run := h.submit(e, &domain.Definition{Tasks: tt.tasks})
			for _, end := range tt.ends {
				h.finish(e, run, end.task, 1, end.status, nil)
			}
			h.ends(run, tt.run)
			assert.Equal(t, tt.want, h.statuses(run))
			skipped := map[string]bool{}
			for _, td := range tt.tasks {
				skipped[td.Name] = true
			}
			for _, end := range tt.ends {
				delete(skipped, end.task)
			}
			for _, a := range h.pub.attempts(t) {
				assert.False(t, skipped[a.Name], "%s was never to be sent to a runner", a.Name)
			}
			assert.Equal(t, []string{"running/running", string(tt.run) + "/completed"}, h.pub.statusEvents(run))
		})
	}
}

func withRetries(t domain.TaskDef, n int) domain.TaskDef {
	t.Retries, t.RetryDelay = intp(n), intp(10)
	return t
}

func TestEngineRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		retries  int
		failures int
		want     domain.Status
	}{
		{"a retry after a failure succeeds", 2, 1, domain.Succeeded},
		{"the last retry's failure fails the run", 2, 3, domain.Failed},
		{"without retries one failure fails the run", 0, 1, domain.Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			e := h.start("a")
			run := h.submit(e, &domain.Definition{Tasks: []domain.TaskDef{
				task("start", tasktype.Start, nil), withRetries(script("a", "start"), tt.retries), task("end", tasktype.End, nil, "a")}})
			attempt := 1
			for ; attempt <= tt.failures; attempt++ {
				h.finish(e, run, "a", attempt, domain.Failed, nil)
				if attempt > tt.retries {
					break
				}
				h.waitTask(run, "a", domain.Waiting)
				// The delay doubles from 10 s: the next attempt waits for it.
				delay := time.Duration(10<<(attempt-1)) * time.Second
				h.advance(delay - time.Second)
				assert.Len(t, attemptsOf(h, run, "a"), attempt, "no attempt before its delay")
				h.advance(time.Second)
			}
			if tt.want == domain.Succeeded {
				h.finish(e, run, "a", attempt, domain.Succeeded, map[string]string{"out": "ok"})
			}
			h.ends(run, tt.want)
			_, tasks := h.stored(run)
			assert.Equal(t, min(tt.failures, tt.retries)+1, tasks[1].Attempt)
		})
	}
}

func attemptsOf(h *harness, run, name string) []int {
	var out []int
	for _, a := range h.pub.attempts(h.t) {
		if a.RunID == run && a.Name == name {
			out = append(out, a.Attempt)
		}
	}
	return out
}

func TestEngineTimeouts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		def     domain.Definition
		advance time.Duration
		// silent runners send no heartbeat.
		silent bool
		want   string
		run    domain.Status
	}{
		{
			name: "a task past its timeout times out",
			def: domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				{Name: "slow", Type: tasktype.Script, Timeout: intp(1), Dependencies: []domain.Dependency{{TaskRef: "start"}},
					Params: []domain.TaskParam{{Name: "script", Value: []byte(`"sleep 100"`)}}},
				task("end", tasktype.End, nil, "slow")}},
			advance: time.Minute,
			want:    "start=succeeded slow=timedout end=succeeded",
			run:     domain.Failed,
		},
		{
			name: "a run past its timeout times out, and its tasks with it",
			def: domain.Definition{Timeout: intp(2), Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				script("slow", "start"), task("end", tasktype.End, nil, "slow")}},
			advance: 2 * time.Minute,
			want:    "start=succeeded slow=timedout end=skipped",
			run:     domain.TimedOut,
		},
		{
			name: "a silent runner loses its attempt to the lease",
			def: domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
				script("lost", "start"), task("end", tasktype.End, nil, "lost")}},
			advance: domain.HeartbeatLease + time.Second,
			silent:  true,
			want:    "start=succeeded lost=failed end=succeeded",
			run:     domain.Failed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			e := h.start("a")
			run := h.submit(e, &tt.def)
			name := tt.def.Tasks[1].Name
			h.dispatched(run, name, 1)
			require.NoError(t, e.Step(context.Background(), run, func(m *domain.Machine) error {
				m.Claim(1, 1, "runner-1")
				return nil
			}))
			// The runner beats every 20 s, unless the case is about its silence.
			beat := 20 * time.Second
			if tt.silent {
				beat = tt.advance
			}
			for left := tt.advance - time.Second; left > 0; left -= beat {
				h.advance(min(beat, left))
				if !tt.silent {
					require.NoError(t, e.Step(context.Background(), run, func(m *domain.Machine) error {
						m.Heartbeat(1, 1, "runner-1")
						return nil
					}))
				}
			}
			h.waitTask(run, name, domain.Running)
			h.advance(time.Second)
			h.ends(run, tt.run)
			assert.Equal(t, tt.want, h.statuses(run))
		})
	}
}

// parentOf is a workflow whose runworkflow task starts child.
func parentOf(child string, wait bool) *domain.Definition {
	return &domain.Definition{Name: "parent", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("kid", tasktype.RunWorkflow, map[string]any{"workflowRef": child, "wait": wait}, "start"),
		task("end", tasktype.End, nil, "kid")}}
}

func TestEngineChildRuns(t *testing.T) {
	t.Parallel()
	t.Run("a parent waits for its child and takes its results", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.defs["child"] = &domain.Definition{Name: "child", Team: "infra", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
			task("work", tasktype.Script, map[string]any{"script": "true"}, "start"),
			task("set", tasktype.SetWFProperty, map[string]any{"output": "answer", "value": "42"}, "work"),
			task("end", tasktype.End, nil, "set")}}
		e := h.start("a")
		parent := h.submit(e, parentOf("child", true))
		h.waitTask(parent, "kid", domain.Running)
		var child string
		require.Eventually(t, func() bool {
			_, tasks := h.stored(parent)
			child = tasks[1].Child
			return child != ""
		}, within, time.Millisecond)
		c, _ := h.stored(child)
		assert.Equal(t, []string{parent}, c.Ancestors)
		assert.True(t, c.SharesSlot, "a child its parent waits for runs in its tree's slot")
		h.finish(e, child, "work", 1, domain.Succeeded, nil)
		h.ends(child, domain.Succeeded)
		h.ends(parent, domain.Succeeded)
		_, tasks := h.stored(parent)
		assert.Equal(t, "42", tasks[1].Results["answer"])
	})
	t.Run("a child deeper than the limit is never started", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.maxDepth = 0
		h.defs["child"] = &domain.Definition{Name: "child", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), task("end", tasktype.End, nil, "start")}}
		e := h.start("a")
		parent := h.submit(e, parentOf("child", true))
		h.ends(parent, domain.Failed)
		assert.Equal(t, "start=succeeded kid=invalid end=succeeded", h.statuses(parent))
		n, err := h.store.CountDescendants(context.Background(), parent)
		require.NoError(t, err)
		assert.Zero(t, n)
	})
	t.Run("cancelling a parent cancels its children, waited for or not", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		// The cascade alone, not the reconciler, which would cancel them later.
		h.reconcile = time.Hour
		h.defs["child"] = &domain.Definition{Name: "child", Team: "infra", Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
			script("work", "start"), task("end", tasktype.End, nil, "work")}}
		e := h.start("a")
		for _, wait := range []bool{true, false} {
			// The parent still runs when it is cancelled: hold comes after its child.
			def := parentOf("child", wait)
			def.Tasks = append(def.Tasks[:2], script("hold", "kid"), task("end", tasktype.End, nil, "hold"))
			parent := h.submit(e, def)
			var child string
			require.Eventually(t, func() bool {
				_, tasks := h.stored(parent)
				child = tasks[1].Child
				return child != ""
			}, within, time.Millisecond)
			h.dispatched(child, "work", 1)
			require.NoError(t, e.Cancel(context.Background(), parent, "cancelled by a test"))
			h.ends(parent, domain.Cancelled)
			h.ends(child, domain.Cancelled)
			err := e.Cancel(context.Background(), parent, "again")
			assert.True(t, apperr.HasReason(err, apperr.WorkflowRunInvalidPhase), "a run cancels once: %v", err)
		}
	})
}

func TestEngineTakesOverADeadReplicasRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"),
		task("end", tasktype.End, nil, "work")}})
	h.dispatched(run, "work", 1)
	h.stop("a")
	before := len(attemptsOf(h, run, "work"))

	// b takes over once a has been silent for the replica timeout, and sends what the run
	// still owes again: the dispatch that a's runner never claimed.
	h.advance(16 * time.Second)
	require.Eventually(t, func() bool {
		r, _ := h.stored(run)
		return r.Owner == "b"
	}, within, time.Millisecond)
	require.Eventually(t, func() bool { return len(attemptsOf(h, run, "work")) > before }, within, time.Millisecond)
	h.finish(b, run, "work", 1, domain.Succeeded, nil)
	h.ends(run, domain.Succeeded)
	seen, err := h.store.Replicas(context.Background())
	require.NoError(t, err)
	assert.NotContains(t, seen, "a", "a dead replica is forgotten once its runs moved")
}

func TestEngineQueuesRunsForASlot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.maxConcurrent = 1
	e := h.start("a")
	def := &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"), task("end", tasktype.End, nil, "work")}}
	first := h.submit(e, def)
	second := h.submit(e, def)
	h.dispatched(first, "work", 1)
	r, _ := h.stored(second)
	assert.Equal(t, domain.Queued, r.Phase, "no slot: queued")
	assert.Empty(t, attemptsOf(h, second, "work"))

	started, err := e.Start(context.Background(), second, "infra", nil)
	require.NoError(t, err)
	assert.False(t, started, "still no slot")

	h.finish(e, first, "work", 1, domain.Succeeded, nil)
	h.ends(first, domain.Succeeded)
	h.finish(e, second, "work", 1, domain.Succeeded, nil)
	h.ends(second, domain.Succeeded)
	n, err := h.store.SlotsTaken(context.Background(), "infra")
	require.NoError(t, err)
	assert.Zero(t, n, "every slot given back")
}

// queueLooks counts the looks for a team's queued runs (startQueued's listings).
type queueLooks struct {
	*memstore.Store
	n atomic.Int32
}

func (s *queueLooks) ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	if f.Queued && f.Team != "" {
		s.n.Add(1)
	}
	return s.Store.ListInFlight(ctx, f)
}

// A run's end frees a slot, and the team's queued runs are looked for, by listing the
// runs in flight: only while some may be queued.
func TestEngineLooksForQueuedRunsOnlyWhenSomeMayBe(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// The reconciler looks at queued runs on its own at every reconcile: only the first
	// one, at start, is let run here.
	h.reconcile, h.maxConcurrent = time.Hour, 1
	looks := &queueLooks{Store: h.store}
	h.runs = looks
	e := h.start("a")
	def := func() *domain.Definition {
		return &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil), script("work", "start"), task("end", tasktype.End, nil, "work")}}
	}
	for range 5 {
		run := h.submit(e, def())
		h.finish(e, run, "work", 1, domain.Succeeded, nil)
		h.ends(run, domain.Succeeded)
	}
	first := h.submit(e, def())
	second := h.submit(e, def())
	r, _ := h.stored(second)
	require.Equal(t, domain.Queued, r.Phase, "no slot: queued")
	h.finish(e, first, "work", 1, domain.Succeeded, nil)
	h.ends(first, domain.Succeeded)
	h.finish(e, second, "work", 1, domain.Succeeded, nil)
	h.ends(second, domain.Succeeded)
	// The first end looks (nothing is known of the team yet), and so does the end that
	// frees the slot the queued run waits for; the ends in between do not.
	assert.LessOrEqual(t, looks.n.Load(), int32(2), "looks for queued runs")
}

func TestEngineRetriesAFailedRunOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	e := h.start("a")
	run := h.submit(e, &domain.Definition{Retries: intp(1), Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		script("work", "start"), task("end", tasktype.End, nil, "work")}})
	h.finish(e, run, "work", 1, domain.Failed, nil)
	h.ends(run, domain.Failed)
	retry := run + "-retry"
	h.finish(e, retry, "work", 1, domain.Succeeded, nil)
	h.ends(retry, domain.Succeeded)
	r, _ := h.stored(retry)
	assert.Equal(t, run, r.RetryOf)
	h.mu.Lock()
	defer h.mu.Unlock()
	assert.Equal(t, []string{run}, h.retried)
}
