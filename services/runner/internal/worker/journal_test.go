package worker

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

func attemptN(n int) events.TaskAttempt {
	return events.TaskAttempt{TaskRunID: "run.1", RunID: "run", Attempt: n}
}

// reopened reads dir's journal as a runner starting again would.
func reopened(t *testing.T, dir string) []journalEntry {
	t.Helper()
	got, err := newJournal(dir).pending()
	require.NoError(t, err)
	return got
}

func TestJournalKeepsTheLastOfEachAttempt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".journal")
	j := newJournal(dir)
	code := 0
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(1), Runner: "r"}))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(2), Runner: "r"}))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(1), Runner: "r", LogSeq: 3, LogOffset: 42}))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(2), Runner: "r",
		Outcome: &executor.Outcome{Status: executor.StatusSucceeded, ExitCode: &code}}))
	j.done(attemptN(1))
	j.done(attemptN(1)) // twice is harmless

	assert.False(t, j.has(attemptN(1)))
	assert.True(t, j.has(attemptN(2)))
	got := reopened(t, dir)
	require.Len(t, got, 1)
	assert.Equal(t, attemptN(2), got[0].Attempt)
	require.NotNil(t, got[0].Outcome)
	assert.Equal(t, executor.StatusSucceeded, got[0].Outcome.Status)
}

// A process killed while writing a line leaves it cut short: the lines before stand, and
// what is written next is read whole.
func TestJournalDropsALineCutShort(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".journal")
	require.NoError(t, newJournal(dir).write(journalEntry{Attempt: attemptN(1), Runner: "r"}))
	f, err := os.OpenFile(filepath.Join(dir, journalFile), os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`{"key":"run.1-2","entry":{"attem`)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	j := newJournal(dir)
	got, err := j.pending()
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, attemptN(1), got[0].Attempt)
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(3), Runner: "r"}))
	got = reopened(t, dir)
	require.Len(t, got, 2)
	assert.Equal(t, attemptN(3), got[1].Attempt)
}

// The file is written again once most of its lines are outdated, and says the same after.
func TestJournalStaysSmall(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".journal")
	j := newJournal(dir)
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(1), Runner: "kept"}))
	for n := 2; n < 2000; n++ {
		require.NoError(t, j.write(journalEntry{Attempt: attemptN(n), Runner: "r"}))
		require.NoError(t, j.write(journalEntry{Attempt: attemptN(n), Runner: "r", LogSeq: 1}))
		j.done(attemptN(n))
	}
	raw, err := os.ReadFile(filepath.Join(dir, journalFile))
	require.NoError(t, err)
	assert.LessOrEqual(t, strings.Count(string(raw), "\n"), compactAfter+1)
	got := reopened(t, dir)
	require.Len(t, got, 1)
	assert.Equal(t, "kept", got[0].Runner)
}

// Entries kept a file each, as runners did before, are taken in.
func TestJournalTakesInEntriesKeptAsFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".journal")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	raw, err := json.Marshal(journalEntry{Attempt: attemptN(4), Runner: "old"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.1-4.json"), raw, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.1-5.json.tmp"), raw, 0o600))

	j := newJournal(dir)
	assert.True(t, j.has(attemptN(4)))
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, left, 1, "the files are gone once their entries are in the journal")
	assert.Equal(t, journalFile, left[0].Name())
	j.done(attemptN(4))
	assert.Empty(t, reopened(t, dir))
}

// A journal removed while the runner runs is written again whole at the next change.
func TestJournalRemovedIsWrittenAgain(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".journal")
	j := newJournal(dir)
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(1), Runner: "r"}))
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, j.write(journalEntry{Attempt: attemptN(2), Runner: "r"}))
	got := reopened(t, dir)
	require.Len(t, got, 2)
	assert.Equal(t, attemptN(1), got[0].Attempt)
	assert.Equal(t, attemptN(2), got[1].Attempt)
}
