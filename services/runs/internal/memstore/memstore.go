// Package memstore keeps everything the runs service stores in memory: runs and task runs,
// quotas and slots, replicas, heartbeats, idempotency keys, logs, actions and locks. It
// passes the same store contract suite as the Mongo store (internal/storetest), so the
// engine and the use cases can be tested on it alone, without a database, in
// milliseconds. Nothing survives the process.
//
// What it keeps is copied in and out, never shared: a caller that changes a run after
// storing it changes its own copy, as with a database.
package memstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// KeyTTL is how long an idempotency key names its run.
const KeyTTL = 24 * time.Hour

// Store is every store of the runs service, in memory. The zero value is not usable: call
// New.
type Store struct {
	mu sync.Mutex
	// live holds the runs in flight, archive those put away; each with its task runs.
	live, archive map[string]*record
	defs          map[string]json.RawMessage
	slots         map[string]map[string]bool
	monthly       map[string]int
	keys          map[string]heldKey
	replicas      map[string]time.Time
	beats         map[string]domain.Heartbeat
	logs          map[string]string
	actions       map[string]domain.Action
	// locks are by team and key ("<team>/<key>"); lockVersion is the last version given a
	// lock, so that a lock removed and taken again never repeats one.
	locks       map[string]domain.Lock
	lockVersion int64
	// held are the monthly counts whose runs are not known stored, by "<team>/<month>"
	// and run id.
	held map[string]map[string]time.Time
	// owedAt is when each run put away that owes events last sent them.
	owedAt map[string]time.Time
	// queued are the attempts waiting for a worker over HTTP (queued.go).
	queued map[string]domain.QueuedAttempt
}

type record struct {
	run   domain.Run
	tasks []domain.TaskRun
}

type heldKey struct {
	run     string
	created time.Time
}

// New returns an empty store.
func New() *Store {
	return &Store{
		live: map[string]*record{}, archive: map[string]*record{}, defs: map[string]json.RawMessage{},
		slots: map[string]map[string]bool{}, monthly: map[string]int{}, held: map[string]map[string]time.Time{}, keys: map[string]heldKey{},
		replicas: map[string]time.Time{}, beats: map[string]domain.Heartbeat{}, logs: map[string]string{},
		actions: map[string]domain.Action{}, locks: map[string]domain.Lock{}, owedAt: map[string]time.Time{},
	}
}

// clone deep-copies v through JSON, as a database would: maps and slices are never shared.
func clone[T any](v T) T {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("memstore: copy %T: %v", v, err))
	}
	var out T
	if err := json.Unmarshal(raw, &out); err != nil {
		panic(fmt.Sprintf("memstore: copy %T: %v", v, err))
	}
	return out
}

func copyRun(r *domain.Run) domain.Run {
	c := *r
	c.Definition = nil
	return clone(c)
}

func copyTasks(tasks []*domain.TaskRun) []domain.TaskRun {
	out := make([]domain.TaskRun, len(tasks))
	for i, t := range tasks {
		out[i] = clone(*t)
	}
	return out
}

func (rec *record) out() (*domain.Run, []*domain.TaskRun) {
	r := clone(rec.run)
	tasks := make([]*domain.TaskRun, len(rec.tasks))
	for i := range rec.tasks {
		t := clone(rec.tasks[i])
		tasks[i] = &t
	}
	return &r, tasks
}

func notFound(id string) error {
	return apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
}

// find answers the record of run id, in flight first, then in the archive.
func (s *Store) find(id string) (*record, bool) {
	if rec, ok := s.live[id]; ok {
		return rec, true
	}
	rec, ok := s.archive[id]
	return rec, ok
}

// CreateRun stores a new run in flight, or in the archive when it ended within its first
// step; domain.ErrConflict when it exists.
func (s *Store) CreateRun(_ context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.find(r.ID); ok {
		return fmt.Errorf("create run %s: %w", r.ID, domain.ErrConflict)
	}
	if r.Definition != nil {
		raw, err := json.Marshal(r.Definition)
		if err != nil {
			return fmt.Errorf("store the definition of %s: %w", r.ID, err)
		}
		s.defs[r.ID] = raw
	}
	into := s.live
	if r.Phase.Ended() {
		r.Owner, r.Queued = "", false
		into = s.archive
		if len(r.Owed) > 0 {
			s.owedAt[r.ID] = r.EndTime
		}
	}
	into[r.ID] = &record{run: copyRun(r), tasks: copyTasks(tasks)}
	return nil
}

// FindRun reads a run, without its definition.
func (s *Store) FindRun(_ context.Context, id string) (*domain.Run, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.find(id)
	if !ok {
		return nil, notFound(id)
	}
	r := clone(rec.run)
	return &r, nil
}

// FindDefinition reads the workflow version r runs.
func (s *Store) FindDefinition(_ context.Context, r *domain.Run) (*domain.Definition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, ok := s.defs[r.ID]
	if !ok {
		return nil, fmt.Errorf("definition of run %s: not stored", r.ID)
	}
	var def domain.Definition
	if err := json.Unmarshal(raw, &def); err != nil {
		return nil, fmt.Errorf("definition of run %s: %w", r.ID, err)
	}
	return &def, nil
}

// FindTaskRuns reads the task runs of r, in definition order.
func (s *Store) FindTaskRuns(_ context.Context, r *domain.Run) ([]*domain.TaskRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.find(r.ID)
	if !ok {
		return nil, notFound(r.ID)
	}
	_, tasks := rec.out()
	return tasks, nil
}

// FindTaskRun reads one task run.
func (s *Store) FindTaskRun(_ context.Context, id string) (*domain.TaskRun, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, i, ok := domain.ParseTaskRunID(id)
	if ok {
		if rec, found := s.find(run); found && i < len(rec.tasks) {
			t := clone(rec.tasks[i])
			return &t, nil
		}
	}
	return nil, apperr.New(apperr.TaskRunNotFound, "Task run '%s' was not found.", id)
}

// SaveStep stores the changed task runs, each on its version, and the run on its version;
// all or nothing.
func (s *Store) SaveStep(_ context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, err := s.saveTasks(r, tasks, changed)
	if err != nil {
		return err
	}
	r.Version++
	rec.run = copyRun(r)
	return nil
}

// SaveTasks stores the changed task runs, each on its version, when the run is at its
// version, which stays; all or nothing.
func (s *Store) SaveTasks(_ context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.saveTasks(r, tasks, changed)
	return err
}

// saveTasks stores the changed task runs of r, each on its version, when r is at its
// version, and answers r's record. s.mu is held.
func (s *Store) saveTasks(r *domain.Run, tasks []*domain.TaskRun, changed []int) (*record, error) {
	rec, ok := s.live[r.ID]
	if !ok || rec.run.Version != r.Version {
		return nil, fmt.Errorf("save run %s: %w", r.ID, domain.ErrConflict)
	}
	for _, i := range changed {
		if i >= len(rec.tasks) || rec.tasks[i].Version != tasks[i].Version {
			return nil, fmt.Errorf("save task runs of %s: %w", r.ID, domain.ErrConflict)
		}
	}
	for _, i := range changed {
		tasks[i].Version++
		rec.tasks[i] = clone(*tasks[i])
	}
	return rec, nil
}

// Archive moves a run that ended to the archive; repeating it is harmless.
func (s *Store) Archive(_ context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &record{run: copyRun(r), tasks: copyTasks(tasks)}
	rec.run.Owner, rec.run.Queued = "", false
	if _, ok := s.archive[r.ID]; !ok {
		s.archive[r.ID] = rec
		if len(rec.run.Owed) > 0 {
			s.owedAt[r.ID] = rec.run.EndTime
		}
	}
	delete(s.live, r.ID)
	return nil
}

// FinalizeArchived moves an archived run from completed to finalized; false when it is
// not completed.
func (s *Store) FinalizeArchived(_ context.Context, id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.archive[id]
	if !ok || rec.run.Phase != domain.Completed {
		return false, nil
	}
	rec.run.Phase = domain.Finalized
	rec.run.Version++
	return true, nil
}

// ListInFlight lists every run in flight.
func (s *Store) ListInFlight(_ context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.InFlight, 0, len(s.live))
	for _, rec := range s.live {
		r := rec.run
		switch {
		case len(f.Owners) > 0 && !slices.Contains(f.Owners, r.Owner),
			f.Team != "" && r.Team != f.Team,
			f.Queued && !r.Queued,
			f.Children && r.Depth == 0,
			!f.WakeBefore.IsZero() && (r.WakeAt.IsZero() || !r.WakeAt.Before(f.WakeBefore)):
			continue
		}
		out = append(out, domain.InFlight{ID: r.ID, Team: r.Team, Owner: r.Owner, Created: r.CreationDate, Queued: r.Queued,
			Phase: r.Phase, Ancestors: slices.Clone(r.Ancestors), WakeAt: r.WakeAt})
	}
	return out, nil
}

// SetQueued marks whether a run in flight waits for a slot, moving its version.
func (s *Store) SetQueued(_ context.Context, id string, queued bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.live[id]; ok {
		rec.run.Queued = queued
		rec.run.Version++
	}
	return nil
}

// TakeOver moves a run in flight from replica from to owner; false when it is not from's.
func (s *Store) TakeOver(_ context.Context, id, from, owner string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.live[id]
	if !ok || rec.run.Owner != from {
		return false, nil
	}
	rec.run.Owner = owner
	rec.run.Version++
	return true, nil
}

// FindDescendants lists the runs in flight, not completed, below run id.
func (s *Store) FindDescendants(_ context.Context, id string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, rec := range s.live {
		if slices.Contains(rec.run.Ancestors, id) && !rec.run.Phase.Ended() {
			out = append(out, rec.run.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// CountDescendants counts the runs below run id, in flight or ended.
func (s *Store) CountDescendants(_ context.Context, id string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for _, recs := range []map[string]*record{s.live, s.archive} {
		for _, rec := range recs {
			if slices.Contains(rec.run.Ancestors, id) {
				n++
			}
		}
	}
	return n, nil
}

// FindStopped answers which of ids ended cancelled or timed out.
func (s *Store) FindStopped(_ context.Context, ids []string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, id := range ids {
		if rec, ok := s.find(id); ok && rec.run.Stopped() {
			out[id] = true
		}
	}
	return out, nil
}

// FindUnfinished lists the ids of team's runs not completed, of workflow unless it is
// empty.
func (s *Store) FindUnfinished(_ context.Context, team, workflow string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, rec := range s.live {
		r := rec.run
		if r.Team == team && (workflow == "" || r.Workflow == workflow) && !r.Phase.Ended() {
			out = append(out, r.ID)
		}
	}
	slices.Sort(out)
	return out, nil
}

// HasLiveRuns reports whether a run of team is in flight or not yet put away.
func (s *Store) HasLiveRuns(_ context.Context, team string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rec := range s.live {
		if rec.run.Team == team {
			return true, nil
		}
	}
	return false, nil
}

// DeleteTeamRuns removes team's runs that ended, with their logs and heartbeats.
func (s *Store) DeleteTeamRuns(_ context.Context, team string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, rec := range s.archive {
		if rec.run.Team != team {
			continue
		}
		for k := range s.logs {
			if strings.HasPrefix(k, id+".") {
				delete(s.logs, k)
			}
		}
		for k := range s.beats {
			if strings.HasPrefix(k, id+".") {
				delete(s.beats, k)
			}
		}
		delete(s.defs, id)
		delete(s.archive, id)
	}
	return nil
}

// matches reports whether f selects r.
func matches(f domain.RunFilter, r *domain.Run) bool {
	in := func(vals []string, v string) bool { return len(vals) == 0 || slices.Contains(vals, v) }
	switch {
	case f.None, r.Team != f.Team, slices.Contains(f.Exclude, r.ID):
		return false
	case !in(f.Statuses, string(r.Status)), !in(f.Phases, string(r.Phase)), !in(f.IDs, r.ID),
		!in(f.Workflows, r.Workflow), !in(f.Triggers, r.Trigger):
		return false
	case f.From != nil && r.CreationDate.Before(*f.From), f.To != nil && r.CreationDate.After(*f.To):
		return false
	}
	for k, v := range f.Labels {
		if got, ok := r.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// selected answers the runs f selects, in flight and ended, by creation date then id.
func (s *Store) selected(f domain.RunFilter) []*domain.Run {
	var out []*domain.Run
	for _, recs := range []map[string]*record{s.live, s.archive} {
		for _, rec := range recs {
			if matches(f, &rec.run) {
				r := clone(rec.run)
				out = append(out, &r)
			}
		}
	}
	slices.SortFunc(out, func(a, b *domain.Run) int {
		return cmp.Or(a.CreationDate.Compare(b.CreationDate), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// FindRuns answers one page of the runs f selects, by creation date, and how many it
// selects in all.
func (s *Store) FindRuns(_ context.Context, f domain.RunFilter, p page.Request) ([]*domain.Run, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := s.selected(f)
	if p.Desc {
		slices.Reverse(all)
	}
	from := min(int(p.Offset()), len(all))
	return all[from:min(from+p.Size, len(all))], int64(len(all)), nil
}

// CountRuns counts the runs f selects by status.
func (s *Store) CountRuns(_ context.Context, f domain.RunFilter) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int64{}
	for _, r := range s.selected(f) {
		out[string(r.Status)]++
	}
	return out, nil
}

// Insight aggregates the runs f selects as of now, listing the newest maxRuns of them.
func (s *Store) Insight(_ context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var in domain.Insight
	runs := s.selected(f)
	durations := make([]int64, 0, len(runs))
	for _, r := range runs {
		d := r.Duration(now)
		durations = append(durations, d)
		in.Total++
		in.TotalDuration += d
		if r.Phase == domain.PhaseRunning {
			in.Running++
		}
	}
	if n := len(durations); n > 0 {
		slices.Sort(durations)
		a, b := durations[(n-1)/2], durations[n/2]
		in.MedianDuration = a + (b-a)/2
	}
	slices.Reverse(runs)
	for _, r := range runs[:min(len(runs), max(maxRuns, 0))] {
		in.Runs = append(in.Runs, domain.RunSummary{ID: r.ID, Workflow: r.Workflow, Status: r.Status,
			CreationDate: r.CreationDate.UTC(), Duration: r.Duration(now)})
	}
	return in, nil
}

// AcquireSlot gives run one of team's max concurrency slots; false when all are taken.
func (s *Store) AcquireSlot(_ context.Context, team, run string, max int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	held := s.slots[team]
	if held[run] {
		return true, nil
	}
	if len(held) >= max {
		return false, nil
	}
	if held == nil {
		held = map[string]bool{}
		s.slots[team] = held
	}
	held[run] = true
	return true, nil
}

// ReleaseSlot frees run's slot, if it holds one.
func (s *Store) ReleaseSlot(_ context.Context, team, run string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.slots[team], run)
	return nil
}

// SlotsTaken reads how many of team's slots are held.
func (s *Store) SlotsTaken(_ context.Context, team string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.slots[team]), nil
}

// CountMonthly counts run against team's month unless max are counted, held until its run
// is stored or its count given back.
func (s *Store) CountMonthly(_ context.Context, team, month, run string, max int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := team + "/" + month
	if s.monthly[key] >= max {
		return false, nil
	}
	s.monthly[key]++
	s.hold(key, run)
	return true, nil
}

func (s *Store) hold(key, run string) {
	if s.held[key] == nil {
		s.held[key] = map[string]time.Time{}
	}
	s.held[key][run] = time.Now()
}

// CountMonthlyOnce counts run unless its count is held already.
func (s *Store) CountMonthlyOnce(_ context.Context, team, month, run string, max int) (ok, added bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := team + "/" + month
	if _, held := s.held[key][run]; held {
		return true, false, nil
	}
	if s.monthly[key] >= max {
		return false, false, nil
	}
	s.monthly[key]++
	s.hold(key, run)
	return true, true, nil
}

// RunStored keeps run's count and forgets it is held.
func (s *Store) RunStored(_ context.Context, team, month, run string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.held[team+"/"+month], run)
	return nil
}

// GiveBackMonthly uncounts run if its count is held.
func (s *Store) GiveBackMonthly(_ context.Context, team, month, run string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := team + "/" + month
	if _, held := s.held[key][run]; !held {
		return false, nil
	}
	delete(s.held[key], run)
	s.monthly[key]--
	return true, nil
}

// HeldMonthly lists the counts held since before before.
func (s *Store) HeldMonthly(_ context.Context, before time.Time) ([]domain.HeldCount, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.HeldCount
	for key, runs := range s.held {
		i := strings.LastIndexByte(key, '/')
		for run, since := range runs {
			if since.Before(before) {
				out = append(out, domain.HeldCount{Team: key[:i], Month: key[i+1:], Run: run, Since: since})
			}
		}
	}
	return out, nil
}

// SettleMonthly has nothing to write: RunStored forgets at once.
func (s *Store) SettleMonthly(context.Context) error { return nil }

// Usage reads team's counters for month.
func (s *Store) Usage(_ context.Context, team, month string) (domain.QuotaUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return domain.QuotaUsage{Concurrent: len(s.slots[team]), Monthly: s.monthly[team+"/"+month]}, nil
}

// DeleteTeamQuotas forgets team's slots and monthly counts.
func (s *Store) DeleteTeamQuotas(_ context.Context, team string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.slots, team)
	for k := range s.monthly {
		if strings.HasPrefix(k, team+"/") {
			delete(s.monthly, k)
			delete(s.held, k)
		}
	}
	return nil
}

// HoldKey reserves key for run and answers the run that holds it.
func (s *Store) HoldKey(_ context.Context, key, run string, now time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.keys[key]; ok && !k.created.Before(now.Add(-KeyTTL)) {
		return k.run, nil
	}
	s.keys[key] = heldKey{run: run, created: now}
	return run, nil
}

// PurgeKeys forgets the keys older than KeyTTL.
func (s *Store) PurgeKeys(_ context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.keys {
		if v.created.Before(now.Add(-KeyTTL)) {
			delete(s.keys, k)
		}
	}
	return nil
}

// DeleteTeamKeys forgets team's idempotency keys.
func (s *Store) DeleteTeamKeys(_ context.Context, team string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.keys {
		if strings.HasPrefix(k, team+"/") {
			delete(s.keys, k)
		}
	}
	return nil
}

// MarkAlive records that replica was alive at.
func (s *Store) MarkAlive(_ context.Context, replica string, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas[replica] = at
	return nil
}

// Replicas answers when each replica was last alive.
func (s *Store) Replicas(context.Context) (map[string]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]time.Time, len(s.replicas))
	for k, v := range s.replicas {
		out[k] = v
	}
	return out, nil
}

// ForgetReplica removes a replica.
func (s *Store) ForgetReplica(_ context.Context, replica string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.replicas, replica)
	return nil
}

// SaveHeartbeat stores a heartbeat of a task run's attempt.
func (s *Store) SaveHeartbeat(_ context.Context, taskRunID string, b domain.Heartbeat) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beats[taskRunID] = b
	return nil
}

// LastHeartbeat reads the last heartbeat of a task run; false when there is none.
func (s *Store) LastHeartbeat(_ context.Context, taskRunID string) (domain.Heartbeat, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.beats[taskRunID]
	return b, ok, nil
}

// PurgeHeartbeats forgets heartbeats older than before.
func (s *Store) PurgeHeartbeats(_ context.Context, before time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, b := range s.beats {
		if b.At.Before(before) {
			delete(s.beats, k)
		}
	}
	return nil
}

func logKey(taskRunID string, attempt, seq int) string {
	return fmt.Sprintf("%s/%04d/%09d", taskRunID, attempt, seq)
}

// AppendLog stores one chunk of an attempt's log; a chunk stored twice is kept once.
func (s *Store) AppendLog(_ context.Context, taskRunID string, attempt, seq int, text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.logs[logKey(taskRunID, attempt, seq)]; !ok {
		s.logs[logKey(taskRunID, attempt, seq)] = text
	}
	return nil
}

// ReadLog answers the chunks of a log from a cursor on, through attempt attempts, and the
// cursor after them.
func (s *Store) ReadLog(_ context.Context, taskRunID string, attempts int, from domain.LogCursor) (string, domain.LogCursor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	cur := from
	if cur.Attempt < 1 {
		cur = domain.LogCursor{Attempt: 1}
	}
	for cur.Attempt <= attempts {
		text, ok := s.logs[logKey(taskRunID, cur.Attempt, cur.Seq)]
		if !ok {
			if cur.Attempt == attempts {
				break // the current attempt may write more
			}
			cur = domain.LogCursor{Attempt: cur.Attempt + 1}
			continue
		}
		b.WriteString(text)
		cur.Seq++
	}
	return b.String(), cur, nil
}
