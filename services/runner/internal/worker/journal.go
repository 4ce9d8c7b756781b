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

// journal keeps a file per claimed attempt under <WorkDir>/.journal: the dispatch and the
// runner that claimed it, how much of its log went out, and the outcome as soon as the
// step ended. A runner that stops reports, when it starts again, what ended unreported,
// and follows what is still running, so a step that ran is not run a second time because
// its runner stopped.
type journal struct{ dir string }

type journalEntry struct {
	Attempt events.TaskAttempt `json:"attempt"`
	// Runner is the runner instance that claimed the attempt: its heartbeats go on under
	// that name after a restart.
	Runner string `json:"runner,omitempty"`
	// LogSeq and LogOffset are the next log chunk's number and the step's output sent
	// until then, in bytes.
	LogSeq    int               `json:"logSeq,omitempty"`
	LogOffset int64             `json:"logOffset,omitempty"`
	Outcome   *executor.Outcome `json:"outcome,omitempty"`
}

func (j journal) path(d events.TaskAttempt) string {
	return filepath.Join(j.dir, fmt.Sprintf("%s-%d.json", d.TaskRunID, d.Attempt))
}

// write stores the entry atomically: a crash leaves the old file or the new one.
func (j journal) write(e journalEntry) error {
	raw, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	p := j.path(e.Attempt)
	tmp := p + ".tmp"
	err = os.WriteFile(tmp, raw, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		// The directory is made on first use (or again, should someone remove it), not
		// looked for on every write.
		if err = os.MkdirAll(j.dir, 0o700); err == nil {
			err = os.WriteFile(tmp, raw, 0o600)
		}
	}
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

func (j journal) done(d events.TaskAttempt) { _ = os.Remove(j.path(d)) }

// has reports whether the runner holds attempt d: claimed, and its report not yet applied.
func (j journal) has(d events.TaskAttempt) bool {
	_, err := os.Stat(j.path(d))
	return err == nil
}

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

// Recover takes up what a previous process of the runner left in its journal: it reports
// (again) the attempts that ended, beating for them until their reports are applied, and
// follows, in the background, those still running
// (or whose end only their workspace knows yet). An executor that cannot follow a step
// (not a Resumer) lets it go: the runs service retries it once its heartbeats stop. Call
// it before taking new dispatches.
func (w *Worker) Recover(ctx context.Context) error {
	entries, err := w.journal.pending()
	if err != nil {
		return err
	}
	for _, e := range entries {
		d := e.Attempt
		if e.Outcome != nil {
			if err := w.report(ctx, d, *e.Outcome); err != nil {
				return fmt.Errorf("report recovered attempt %s/%d: %w", d.TaskRunID, d.Attempt, err)
			}
			w.log.Info("reported an attempt finished before the runner stopped", "taskRunId", d.TaskRunID, "attempt", d.Attempt)
			_ = os.RemoveAll(w.workspace(d))
			w.lingering.Go(func() { w.linger(ctx, d, e.Runner) })
			continue
		}
		opened, err := d.Opened(w.opts.Sealer)
		if _, ok := w.opts.Executor(opened.Spec).(executor.Resumer); err != nil || !ok || !w.start(ctx, d) {
			w.journal.done(d)
			_ = os.RemoveAll(w.workspace(d))
			continue
		}
		w.wg.Go(func() {
			defer w.release(d)
			w.execute(ctx, e, true)
		})
		w.log.Info("following an attempt started before the runner stopped", "taskRunId", d.TaskRunID, "attempt", d.Attempt)
	}
	return nil
}
