package domain

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestParseAttemptID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id            string
		run           string
		task, attempt int
		ok            bool
	}{
		{"01a2-b3c4.3-2", "01a2-b3c4", 3, 2, true},
		{AttemptID(TaskRunID("r", 0), 1), "r", 0, 1, true},
		{"r.1-0", "", 0, 0, false},
		{"r.1", "", 0, 0, false},
		{"r-1", "", 0, 0, false},
		{"r.x-1", "", 0, 0, false},
	}
	for _, tt := range tests {
		run, task, attempt, ok := ParseAttemptID(tt.id)
		assert.Equal(t, tt.ok, ok, tt.id)
		if tt.ok {
			assert.Equal(t, []any{tt.run, tt.task, tt.attempt}, []any{run, task, attempt}, tt.id)
		}
	}
}

// A claim given back makes the attempt ready and dispatched again, counting no try; only
// its holder gives it back, and only while it runs.
func TestReleaseGivesAClaimBack(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	st := &State{Run: &Run{ID: "r", Phase: PhaseRunning}, Tasks: []*TaskRun{{ID: "r.0", Type: "generic", Status: Running, Attempt: 1, Runner: "w"}}}
	m := &Machine{S: st, Now: now, changed: map[int]Status{}}
	assert.False(t, m.Release(0, 1, "other"), "not its holder")
	assert.False(t, m.Release(0, 2, "w"), "not its attempt")
	assert.True(t, m.Release(0, 1, "w"))
	tr := st.Tasks[0]
	assert.Equal(t, Ready, tr.Status)
	assert.Empty(t, tr.Runner)
	assert.Equal(t, 1, tr.Attempt, "no try counted")
	assert.Equal(t, now, tr.DispatchedAt)
	assert.Equal(t, []int{0}, m.eff.Dispatch)
	assert.False(t, m.Release(0, 1, "w"), "given back already")
}
