package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// fakeSchedules is the schedules service: one schedule per key, made before anything can
// go wrong with the answer.
type fakeSchedules struct {
	mu   sync.Mutex
	asks []ScheduleRequest
	made map[string]ScheduleRequest
	// fail, when set, answers ask n (from 1) with an error instead, nothing made.
	fail func(n int) error
	// lost makes the schedule of ask n but loses its answer.
	lost map[int]bool
	// hold, when set, keeps each ask, once made, until it is closed or the caller gives up.
	hold chan struct{}
}

func newFakeSchedules() *fakeSchedules {
	return &fakeSchedules{made: map[string]ScheduleRequest{}, lost: map[int]bool{}}
}

func (f *fakeSchedules) CreateSchedule(ctx context.Context, r ScheduleRequest) (ScheduleMade, error) {
	f.mu.Lock()
	f.asks = append(f.asks, r)
	n, fail, hold := len(f.asks), f.fail, f.hold
	if fail != nil {
		if err := fail(n); err != nil {
			f.mu.Unlock()
			return ScheduleMade{}, err
		}
	}
	if _, ok := f.made[r.Key]; !ok {
		f.made[r.Key] = r
	}
	made := ScheduleMade{ID: "sch-" + r.Key, At: f.made[r.Key].At}
	lost := f.lost[n]
	f.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return ScheduleMade{}, ctx.Err()
		}
	}
	if lost {
		return ScheduleMade{}, apperr.New(apperr.DependencyUnavailable, "The schedules service is unavailable; try again.")
	}
	return made, nil
}

func (f *fakeSchedules) counts() (asks, made int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asks), len(f.made)
}

func (f *fakeSchedules) keys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, a := range f.asks {
		out = append(out, a.Key)
	}
	return out
}

// later is start → later (a runscheduledworkflow task) → after, which keeps its result, →
// end.
func later(params map[string]any) *domain.Definition {
	return &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("later", tasktype.RunScheduledWorkflow, params, "start"),
		task("after", tasktype.SetWFProperty, map[string]any{"output": "scheduled", "value": "$(tasks.later.results.scheduleId)"}, "later"),
		task("end", tasktype.End, nil, "after")}}
}

var inAMinute = map[string]any{"workflowRef": "nightly", "futureIn": "1", "futurePeriod": "minutes",
	"params": map[string]any{"who": "ada"}, "labels": map[string]any{"from": "release"}}

// taskOf reads task name of run as stored.
func (h *harness) taskOf(run, name string) *domain.TaskRun {
	h.t.Helper()
	_, tasks := h.stored(run)
	for _, t := range tasks {
		if t.Name == name {
			return t
		}
	}
	h.t.Fatalf("no task %s in run %s", name, run)
	return nil
}

func TestEngineScheduledRuns(t *testing.T) {
	t.Parallel()
	t.Run("made once, for the run's initiator; the run goes on with its id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := newFakeSchedules()
		h.schedules = f
		e := h.start("a")
		run := h.submit(e, later(inAMinute))
		h.ends(run, domain.Succeeded)
		lt := h.taskOf(run, "later")
		asks, made := f.counts()
		assert.Equal(t, 1, asks)
		assert.Equal(t, 1, made)
		assert.Equal(t, ScheduleRequest{Team: "infra", Key: lt.ID, Workflow: "nightly", At: t0.Add(time.Minute), Timezone: "UTC",
			Params: map[string]any{"who": "ada"}, Labels: map[string]string{"from": "release"}, Name: "later",
			Description: "Made by task 'later' of run " + run + " of workflow 'wf'.", By: domain.Initiator{Type: "user", ID: "u1"}}, f.asks[0])
		assert.Equal(t, map[string]string{"scheduleId": "sch-" + lt.ID}, lt.Results)
		r, _ := h.stored(run)
		assert.Equal(t, "sch-"+lt.ID, r.Results["scheduled"])
	})
	t.Run("a refusal fails the task, saying why", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := newFakeSchedules()
		f.fail = func(int) error {
			return apperr.New(apperr.WorkflowNotFound, "Workflow 'nightly' was not found in team 'infra'.")
		}
		h.schedules = f
		e := h.start("a")
		run := h.submit(e, later(inAMinute))
		h.ends(run, domain.Failed)
		lt := h.taskOf(run, "later")
		assert.Equal(t, domain.Failed, lt.Status)
		assert.Equal(t, "cannot schedule the run: Workflow 'nightly' was not found in team 'infra'.", lt.StatusMessage)
		asks, made := f.counts()
		assert.Equal(t, 1, asks, "a refusal is not asked again")
		assert.Zero(t, made)
	})
	t.Run("without a schedules service the task fails", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		e := h.start("a")
		run := h.submit(e, later(inAMinute))
		h.ends(run, domain.Failed)
		assert.Equal(t, "cannot schedule the run: no schedules service is configured", h.taskOf(run, "later").StatusMessage)
	})
	t.Run("a service down is asked again after a delay; an answer lost makes no second schedule", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := newFakeSchedules()
		f.fail = func(n int) error {
			if n <= 2 {
				return apperr.New(apperr.DependencyUnavailable, "The schedules service is unavailable; try again.")
			}
			return nil
		}
		f.lost[3] = true
		h.schedules = f
		e := h.start("a")
		run := h.submit(e, later(inAMinute))
		for asked := 1; asked <= 3; asked++ {
			var lt *domain.TaskRun
			require.Eventually(t, func() bool {
				// Its timer clears the delay before asking: a delay stored after the ask
				// is the answer's.
				asks, _ := f.counts()
				lt = h.taskOf(run, "later")
				return asks == asked && !lt.WakeAt.IsZero()
			}, within, time.Millisecond, "ask %d answered", asked)
			assert.Equal(t, domain.Running, lt.Status)
			assert.Contains(t, lt.StatusMessage, "cannot reach the schedules service (The schedules service is unavailable; try again.)")
			h.advance(lt.WakeAt.Sub(h.clock.Now()))
		}
		h.ends(run, domain.Succeeded)
		asks, made := f.counts()
		assert.Equal(t, 4, asks)
		assert.Equal(t, 1, made, "the answer lost was the schedule made, found again by its key")
		lt := h.taskOf(run, "later")
		assert.Equal(t, []string{lt.ID, lt.ID, lt.ID, lt.ID}, f.keys())
		assert.Equal(t, "sch-"+lt.ID, lt.Results["scheduleId"])
		assert.Empty(t, lt.StatusMessage)
	})
	t.Run("a replica that dies asking: the one taking over asks again, under the same key", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := newFakeSchedules()
		f.hold = make(chan struct{})
		h.schedules = f
		a := h.start("a")
		h.start("b")
		run := h.submit(a, later(inAMinute))
		require.Eventually(t, func() bool { asks, _ := f.counts(); return asks == 1 }, within, time.Millisecond)
		h.stop("a") // made, its answer never recorded
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		h.advance(16 * time.Second)
		h.ends(run, domain.Succeeded)
		asks, made := f.counts()
		assert.Equal(t, 2, asks)
		assert.Equal(t, 1, made)
		lt := h.taskOf(run, "later")
		assert.Equal(t, "sch-"+lt.ID, lt.Results["scheduleId"], "the schedule the dead replica made")
	})
	t.Run("a run cancelled while its task asks ends cancelled", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		f := newFakeSchedules()
		hold := make(chan struct{})
		f.hold = hold
		h.schedules = f
		e := h.start("a")
		run := h.submit(e, later(inAMinute))
		require.Eventually(t, func() bool { asks, _ := f.counts(); return asks == 1 }, within, time.Millisecond)
		require.NoError(t, e.Cancel(context.Background(), run, "cancelled by a test"))
		close(hold)
		h.ends(run, domain.Cancelled)
		assert.Equal(t, domain.Cancelled, h.taskOf(run, "later").Status)
	})
}
