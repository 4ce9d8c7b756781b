package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// journal keeps, under <WorkDir>/.journal, what the runner holds of each attempt it
// claimed: the dispatch and the runner that claimed it, how much of its log went out, and
// the outcome as soon as the step ended. A runner that stops reports, when it starts
// again, what ended unreported, and follows what is still running, so a step that ran is
// not run a second time because its runner stopped.
//
// It is one file appended to, a line per change: appending is a write to an open file,
// where writing a file per change and renaming it in place cost two directory changes,
// 0.25–0.35 ms each on a busy disk, twice on every step. A process that dies mid-write
// loses at most that line, the one before stands. The file is written again, holding only
// what is current, once most of its lines are outdated.
type journal struct {
	dir string

	mu sync.Mutex
	// loaded is set once the file was read into entries.
	loaded  bool
	entries map[string]journalEntry
	f       *os.File
	// lines counts the lines in the file.
	lines int
}

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

// journalLine is one change: an attempt's entry as it now is, or, without one, the
// attempt let go.
type journalLine struct {
	Key   string        `json:"key"`
	Entry *journalEntry `json:"entry,omitempty"`
}

const (
	journalFile = "log"
	// compactAfter is how many lines the file may hold before it is written again, unless
	// most of them are current.
	compactAfter = 256
)

func newJournal(dir string) *journal { return &journal{dir: dir} }

func journalKey(d events.TaskAttempt) string { return fmt.Sprintf("%s-%d", d.TaskRunID, d.Attempt) }

// write stores the entry; once it returns, a runner starting again reads it.
func (j *journal) write(e journalEntry) error {
	return j.change(journalKey(e.Attempt), &e)
}

// done lets go of attempt d.
func (j *journal) done(d events.TaskAttempt) { _ = j.change(journalKey(d), nil) }

// has reports whether the runner holds attempt d: claimed, and its report not yet applied.
func (j *journal) has(d events.TaskAttempt) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.load(); err != nil {
		return false
	}
	_, ok := j.entries[journalKey(d)]
	return ok
}

// pending reads the entries the runner holds, a previous run's included.
func (j *journal) pending() ([]journalEntry, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.load(); err != nil {
		return nil, err
	}
	keys := slices.Sorted(maps.Keys(j.entries))
	out := make([]journalEntry, len(keys))
	for i, k := range keys {
		out[i] = j.entries[k]
	}
	return out, nil
}

func (j *journal) change(key string, e *journalEntry) error {
	raw, err := json.Marshal(journalLine{Key: key, Entry: e})
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.load(); err != nil {
		return err
	}
	if _, held := j.entries[key]; !held && e == nil {
		return nil
	}
	if err := j.append(append(raw, '\n')); err != nil {
		return err
	}
	if e == nil {
		delete(j.entries, key)
	} else {
		j.entries[key] = *e
	}
	if j.lines > compactAfter && j.lines > 4*len(j.entries) {
		// The change is kept already: a file not written again now is at the next change.
		_ = j.compact()
	}
	return nil
}

// append writes one whole line at the end of the file, opening it when it is not open,
// and writing what is current again first should someone have removed it meanwhile.
func (j *journal) append(line []byte) error {
	if j.f != nil && !j.inPlace() {
		_ = j.f.Close()
		j.f = nil
		if err := j.compact(); err != nil {
			return err
		}
	}
	if j.f == nil {
		if err := j.open(); err != nil {
			return err
		}
	}
	if _, err := j.f.Write(line); err != nil {
		// Nothing half written stays behind a line that follows: the next write starts on
		// a file read again.
		_ = j.f.Close()
		j.f, j.loaded = nil, false
		return fmt.Errorf("journal: %w", err)
	}
	j.lines++
	return nil
}

// inPlace reports whether the open file is still the journal's.
func (j *journal) inPlace() bool {
	open, err := j.f.Stat()
	if err != nil {
		return false
	}
	named, err := os.Stat(filepath.Join(j.dir, journalFile))
	return err == nil && os.SameFile(open, named)
}

func (j *journal) open() error {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(j.dir, journalFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	j.f = f
	return nil
}

// load reads the file once: its last line may have been cut short by a process that died
// writing it, and is dropped. Entries a runner kept as files of their own before are taken
// in too. j.mu is held.
func (j *journal) load() error {
	if j.loaded {
		return nil
	}
	j.entries = map[string]journalEntry{}
	j.lines = 0
	path := filepath.Join(j.dir, journalFile)
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	whole := bytes.LastIndexByte(raw, '\n') + 1
	sc := bufio.NewScanner(bytes.NewReader(raw[:whole]))
	sc.Buffer(nil, len(raw)+1)
	for sc.Scan() {
		var l journalLine
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Key == "" {
			continue
		}
		j.lines++
		if l.Entry == nil {
			delete(j.entries, l.Key)
		} else {
			j.entries[l.Key] = *l.Entry
		}
	}
	legacy, err := j.legacy()
	if err != nil {
		return err
	}
	maps.Copy(j.entries, legacy)
	if whole < len(raw) || len(legacy) > 0 {
		// What is current is written again whole, the cut line and the files gone.
		if err := j.compact(); err != nil {
			return err
		}
		for name := range legacy {
			_ = os.Remove(filepath.Join(j.dir, name+".json"))
		}
	}
	j.loaded = true
	return nil
}

// legacy reads the entries kept one per file (<task run>-<attempt>.json), as runners did
// before the journal was one file.
func (j *journal) legacy() (map[string]journalEntry, error) {
	items, err := os.ReadDir(j.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	out := map[string]journalEntry{}
	for _, it := range items {
		name, ok := strings.CutSuffix(it.Name(), ".json")
		if !ok {
			if strings.HasSuffix(it.Name(), ".tmp") {
				_ = os.Remove(filepath.Join(j.dir, it.Name()))
			}
			continue
		}
		raw, err := os.ReadFile(filepath.Join(j.dir, it.Name()))
		var e journalEntry
		if err != nil || json.Unmarshal(raw, &e) != nil {
			_ = os.Remove(filepath.Join(j.dir, it.Name()))
			continue
		}
		out[name] = e
	}
	return out, nil
}

// compact writes the current entries to a new file and puts it in the old one's place.
// j.mu is held.
func (j *journal) compact() error {
	if err := os.MkdirAll(j.dir, 0o700); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	var buf bytes.Buffer
	for _, k := range slices.Sorted(maps.Keys(j.entries)) {
		e := j.entries[k]
		raw, err := json.Marshal(journalLine{Key: k, Entry: &e})
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		buf.Write(raw)
		buf.WriteByte('\n')
	}
	path := filepath.Join(j.dir, journalFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if j.f != nil {
		_ = j.f.Close()
		j.f = nil
	}
	j.lines = len(j.entries)
	return nil
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
