package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// journal keeps a file per claimed attempt under <WorkDir>/.journal: the dispatch once
// claimed, and the outcome as soon as the step ended on its own. A runner that stops after
// a step ended but before its report left reports it when it starts again, so a step that
// ran is not run a second time because its report was lost.
type journal struct{ dir string }

type journalEntry struct {
	Attempt events.TaskAttempt `json:"attempt"`
	Outcome *executor.Outcome  `json:"outcome,omitempty"`
}

func (j journal) path(d events.TaskAttempt) string {
	return filepath.Join(j.dir, fmt.Sprintf("%s-%d.json", d.TaskRunID, d.Attempt))
}

// write stores the entry atomically: a crash leaves the old file or the new one.
func (j journal) write(e journalEntry) error {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	p := j.path(e.Attempt)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (j journal) claimed(d events.TaskAttempt) error { return j.write(journalEntry{Attempt: d}) }

func (j journal) ended(d events.TaskAttempt, out executor.Outcome) error {
	return j.write(journalEntry{Attempt: d, Outcome: &out})
}

func (j journal) done(d events.TaskAttempt) { _ = os.Remove(j.path(d)) }

// pending reads the entries a previous run of the runner left.
func (j journal) pending() ([]journalEntry, error) {
	items, err := os.ReadDir(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	var out []journalEntry
	for _, it := range items {
		p := filepath.Join(j.dir, it.Name())
		if !strings.HasSuffix(it.Name(), ".json") {
			_ = os.Remove(p)
			continue
		}
		raw, err := os.ReadFile(p)
		var e journalEntry
		if err != nil || json.Unmarshal(raw, &e) != nil {
			_ = os.Remove(p)
			continue
		}
		out = append(out, e)
	}
	return out, nil
}

// Recover reports the attempts a previous run of the runner finished but did not report,
// and forgets those it did not finish: the runs service retries them once their heartbeats
// stop. Call it before taking new dispatches.
func (w *Worker) Recover(ctx context.Context) error {
	entries, err := w.journal.pending()
	if err != nil {
		return err
	}
	for _, e := range entries {
		d := e.Attempt
		if e.Outcome != nil {
			out := *e.Outcome
			id := fmt.Sprintf("%s/%d/ended", d.TaskRunID, d.Attempt)
			if err := w.publish(ctx, d, id, events.TaskUpdate{Kind: events.UpdateEnded, Status: out.Status,
				ExitCode: out.ExitCode, Message: out.Message, Results: out.Results}); err != nil {
				return fmt.Errorf("report recovered attempt %s/%d: %w", d.TaskRunID, d.Attempt, err)
			}
			w.log.Info("reported an attempt finished before the runner stopped", "taskRunId", d.TaskRunID, "attempt", d.Attempt)
		}
		w.journal.done(d)
		// Its workspace, if the runner stopped before removing it.
		_ = os.RemoveAll(filepath.Join(w.opts.WorkDir, fmt.Sprintf("%s-%d", d.TaskRunID, d.Attempt)))
	}
	return nil
}
