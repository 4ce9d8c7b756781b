package worker

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/runner/internal/executor"
)

func TestFollowing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j := newJournal(dir)
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(1), Runner: "r"}))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(2), Runner: "r", Outcome: &executor.Outcome{Status: executor.StatusSucceeded}}))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(3), Runner: "r"}))
	j.done(attemptN(3))
	// As a runner starting again reads it.
	w := &Worker{journal: newJournal(dir)}
	tests := []struct {
		name    string
		attempt int
		want    bool
	}{
		{name: "running when the runner stopped", attempt: 1, want: true},
		{name: "ended, to be reported", attempt: 2},
		{name: "let go", attempt: 3},
		{name: "never held", attempt: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, w.Following(attemptN(tt.attempt).TaskRunID, tt.attempt))
		})
	}
}
