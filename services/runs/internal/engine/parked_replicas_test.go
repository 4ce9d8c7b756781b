package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// parkedWithState waits for e to have put run out of memory with its state kept.
func parkedWithState(t *testing.T, e *Engine, run string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, ok := e.parked.keptVersion(run)
		return ok
	}, within, time.Millisecond, "run %s parked with its state", run)
}

// A run parked with its state on its owner and moved on by another replica (a callback
// taken there opens an approval) takes a decision sent to its owner: the refusal decided
// on the state parked, where the approval is not open yet, is decided again on the run as
// stored.
func TestEngineParkedRunMovedElsewhereTakesADecision(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"),
		task("g", tasktype.Approval, nil, "hook"), task("end", tasktype.End, nil, "g")}})
	h.waitTask(run, "hook", domain.Waiting)
	parkedWithState(t, a, run)

	h.callback(b, run, "go")
	act := h.openAction(run)
	_, kept := a.parked.keptVersion(run)
	require.True(t, kept, "the owner still holds the state it parked, from before the callback")

	h.decide(a, act.ID, true)
	h.ends(run, domain.Succeeded)
	require.Equal(t, "start=succeeded hook=succeeded g=succeeded end=succeeded", h.statuses(run))
}

// A run parked with its state on its owner and moved on by another replica that then
// stops (a callback starts a wait of five minutes at most there) times out on its owner: the
// owner's timer step looks at the stored run rather than the state it parked, on which
// nothing is due.
func TestEngineParkedRunMovedElsewhereTimesOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.start("a")
	b := h.start("b")
	run := h.submit(a, &domain.Definition{Tasks: []domain.TaskDef{task("start", tasktype.Start, nil),
		task("hook", tasktype.EventWait, map[string]any{"topic": "go"}, "start"),
		task("wait", tasktype.EventWait, map[string]any{"topic": "done", "timeout": 5}, "hook"),
		task("end", tasktype.End, nil, "wait")}})
	h.waitTask(run, "hook", domain.Waiting)
	parkedWithState(t, a, run)

	h.callback(b, run, "go")
	h.waitTask(run, "wait", domain.Waiting)
	h.stop("b")
	_, kept := a.parked.keptVersion(run)
	require.True(t, kept, "the owner still holds the state it parked, from before the callback")

	h.advance(10 * time.Minute)
	h.ends(run, domain.Failed)
	require.Equal(t, "start=succeeded hook=succeeded wait=timedout end=succeeded", h.statuses(run))
}
