package worker

import "github.com/baton-flow/baton/libs/events"

// Following reports whether the runner holds the attempt and has yet to learn how its step
// ended: a step a previous process of the runner started, which Recover follows. An
// executor that finds what such a process left running keeps that and removes the rest.
func (w *Worker) Following(taskRunID string, attempt int) bool {
	e, ok := w.journal.entry(events.TaskAttempt{TaskRunID: taskRunID, Attempt: attempt})
	return ok && e.Outcome == nil
}

// entry reads the entry of attempt d, if the runner holds it.
func (j *journal) entry(d events.TaskAttempt) (journalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.load(); err != nil {
		return journalEntry{}, false
	}
	e, ok := j.entries[journalKey(d)]
	return e, ok
}
