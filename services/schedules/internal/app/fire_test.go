package app

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// fakeClaims is Claims in memory, over one schedule at a time; before, when set, runs
// before each Keep and Holds (another writer, or a failure).
type fakeClaims struct {
	mu     sync.Mutex
	s      domain.Schedule
	claim  string
	keeps  int
	before func(f *fakeClaims) error
}

func (f *fakeClaims) ClaimDue(_ context.Context, token string, horizon, _, _ time.Time, _ int) ([]*domain.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if due := f.s.Due(); due.IsZero() || due.After(horizon) || f.claim != "" {
		return nil, nil
	}
	f.claim = token
	s := f.s
	s.Pending = append([]time.Time(nil), f.s.Pending...)
	return []*domain.Schedule{&s}, nil
}

// hook runs before, once.
func (f *fakeClaims) hook() error {
	if f.before == nil {
		return nil
	}
	hook := f.before
	f.before = nil
	return hook(f)
}

func (f *fakeClaims) Holds(_ context.Context, _, token string) (bool, error) {
	if err := f.hook(); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.claim == token, nil
}

func (f *fakeClaims) Keep(_ context.Context, s *domain.Schedule, token string, until time.Time) error {
	if err := f.hook(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claim != token {
		return domain.ErrConflict
	}
	s.Version++
	f.s = *s
	f.s.Pending = append([]time.Time(nil), s.Pending...)
	f.keeps++
	if until.IsZero() {
		f.claim = ""
	}
	return nil
}

// fakeRuns is the runs service: one run per key, each running until ended.
type fakeRuns struct {
	mu        sync.Mutex
	keys      []string // every submit, in order
	runs      map[string]string
	ended     map[string]bool
	cancelled []string
	fail      error // answered by the next Submit, then cleared
}

func newFakeRuns() *fakeRuns { return &fakeRuns{runs: map[string]string{}, ended: map[string]bool{}} }

func (r *fakeRuns) Submit(_ context.Context, s *domain.Schedule, at time.Time) (string, bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.fail; err != nil {
		r.fail = nil
		return "", false, err
	}
	key := domain.FireKey(s.ID, at)
	r.keys = append(r.keys, key)
	if id, ok := r.runs[key]; ok {
		return id, false, nil
	}
	r.runs[key] = "run-" + key
	return r.runs[key], true, nil
}

func (r *fakeRuns) Completed(_ context.Context, run string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ended[run], nil
}

func (r *fakeRuns) Cancel(_ context.Context, run, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cancelled = append(r.cancelled, run)
	r.ended[run] = true
	return nil
}

var base = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func hourly() domain.Schedule {
	return domain.Schedule{ID: "s1", Team: "ops", Workflow: "build", Type: domain.TypeCron, Status: domain.StatusActive,
		Cron: "0 * * * *", Timezone: "UTC", Overlap: domain.OverlapAllow, Misfire: domain.MisfireFireOnce, Next: base, Version: 1}
}

// work claims the schedule at now, as a scheduler would, and works on it.
func work(t *testing.T, f *Firer, store *fakeClaims, now time.Time) (kept bool, err error) {
	t.Helper()
	f.Now = func() time.Time { return now }
	got, err := store.ClaimDue(context.Background(), "replica/1", now.Add(2*time.Second), now, now.Add(time.Minute), 10)
	require.NoError(t, err)
	if len(got) == 0 {
		return false, nil
	}
	return f.Work(context.Background(), got[0], "replica/1", now.Add(2*time.Second), 15*time.Second)
}

func TestWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		s      func() domain.Schedule
		now    time.Time
		keys   []string
		next   time.Time
		status domain.Status
	}{
		{"due", hourly, base.Add(time.Second), []string{"s1@2026-11-27T10:00:00Z"}, base.Add(time.Hour), domain.StatusActive},
		{"missed, one catch-up", hourly, base.Add(3*time.Hour + 10*time.Minute), []string{"s1@2026-11-27T13:00:00Z"}, base.Add(4 * time.Hour), domain.StatusActive},
		{"missed, none", func() domain.Schedule { s := hourly(); s.Misfire = domain.MisfireSkip; return s },
			base.Add(3*time.Hour + 10*time.Minute), nil, base.Add(4 * time.Hour), domain.StatusActive},
		{"missed, all in the window", func() domain.Schedule {
			s := hourly()
			s.Misfire, s.CatchupWindow = domain.MisfireFireAll, 150*time.Minute
			return s
		}, base.Add(3*time.Hour + 10*time.Minute), []string{"s1@2026-11-27T11:00:00Z", "s1@2026-11-27T12:00:00Z", "s1@2026-11-27T13:00:00Z"},
			base.Add(4 * time.Hour), domain.StatusActive},
		{"run once", func() domain.Schedule {
			return domain.Schedule{ID: "s1", Team: "ops", Type: domain.TypeRunOnce, Status: domain.StatusActive, Date: base, Next: base, Timezone: "UTC"}
		}, base.Add(time.Second), []string{"s1@2026-11-27T10:00:00Z"}, time.Time{}, domain.StatusCompleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, runs := &fakeClaims{s: tt.s()}, newFakeRuns()
			_, err := work(t, &Firer{Store: store, Runs: runs}, store, tt.now)
			require.NoError(t, err)
			assert.Equal(t, tt.keys, runs.keys)
			assert.True(t, tt.next.Equal(store.s.Next), "next %s", store.s.Next)
			assert.Equal(t, tt.status, store.s.Status)
			assert.Empty(t, store.s.Pending)
			assert.Empty(t, store.claim, "let go: nothing is due soon")
		})
	}
}

// Nothing due, paused, or with its trigger off: not claimed, nothing fired.
func TestWorkLeavesWhatIsNotDue(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]func() domain.Schedule{
		"not due yet": hourly,
		"paused":      func() domain.Schedule { s := hourly(); s.Status = domain.StatusInactive; return s },
		"trigger off": func() domain.Schedule { s := hourly(); s.TriggerDisabled = true; return s },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store, runs := &fakeClaims{s: s()}, newFakeRuns()
			now := base.Add(-time.Minute)
			if name != "not due yet" {
				now = base.Add(time.Second)
			}
			_, err := work(t, &Firer{Store: store, Runs: runs}, store, now)
			require.NoError(t, err)
			assert.Empty(t, runs.keys)
			assert.Equal(t, 0, store.keeps)
		})
	}
}

// A per-second schedule stays claimed from fire to fire: its next is within the horizon.
func TestWorkKeepsTheClaimOfWhatIsDueSoon(t *testing.T) {
	t.Parallel()
	s := hourly()
	s.Cron = "* * * * * *"
	store, runs := &fakeClaims{s: s}, newFakeRuns()
	kept, err := work(t, &Firer{Store: store, Runs: runs}, store, base)
	require.NoError(t, err)
	assert.True(t, kept)
	assert.Equal(t, "replica/1", store.claim)
	assert.True(t, store.s.Next.Equal(base.Add(time.Second)))
}

// catchUp is hourly with three fires missed (at 11:00, 12:00 and 13:00 at 13:10), all
// owed.
func catchUp() domain.Schedule {
	s := hourly()
	s.Misfire, s.CatchupWindow, s.Next = domain.MisfireFireAll, 3*time.Hour, base.Add(time.Hour)
	return s
}

// A replica that dies before storing what the fires made leaves them to the next, which
// submits them under the same keys: the one fire due now is planned again the same, and
// the fires of a larger plan were stored as pending before any was submitted.
func TestWorkCutShortIsDoneAgainUnderTheSameKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		s       func() domain.Schedule
		now     time.Time
		pending []time.Time
		keys    []string
		last    time.Time
	}{
		{"the fire due now", hourly, base.Add(time.Second), nil, []string{"s1@2026-11-27T10:00:00Z"}, base},
		{"fires caught up", catchUp, base.Add(3*time.Hour + 10*time.Minute), []time.Time{base.Add(time.Hour), base.Add(2 * time.Hour), base.Add(3 * time.Hour)},
			[]string{"s1@2026-11-27T11:00:00Z", "s1@2026-11-27T12:00:00Z", "s1@2026-11-27T13:00:00Z"}, base.Add(3 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, runs := &fakeClaims{s: tt.s()}, newFakeRuns()
			f := &Firer{Store: store, Runs: runs}
			store.before = func(f *fakeClaims) error {
				f.before = func(*fakeClaims) error { return errors.New("the replica died") }
				return nil
			}
			_, err := work(t, f, store, tt.now)
			require.Error(t, err)
			assert.Equal(t, tt.keys, runs.keys)
			assert.Equal(t, tt.pending, store.s.Pending, "the fires stored as owed")
			store.claim = "" // its claim lapses
			_, err = work(t, f, store, tt.now.Add(20*time.Second))
			require.NoError(t, err)
			assert.Equal(t, slices.Concat(tt.keys, tt.keys), runs.keys, "submitted twice, under the same keys")
			assert.Len(t, runs.runs, len(tt.keys), "one run a fire")
			assert.Empty(t, store.s.Pending)
			assert.True(t, store.s.Last.Equal(tt.last), "last %s", store.s.Last)
		})
	}
}

// The one fire due now costs one write, stored with what it made; a larger plan is stored
// before it is submitted, and then again.
func TestWorkWrites(t *testing.T) {
	t.Parallel()
	store := &fakeClaims{s: hourly()}
	_, err := work(t, &Firer{Store: store, Runs: newFakeRuns()}, store, base.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, 1, store.keeps)

	store = &fakeClaims{s: catchUp()}
	_, err = work(t, &Firer{Store: store, Runs: newFakeRuns()}, store, base.Add(3*time.Hour+10*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, 2, store.keeps)
}

// A claim lost before the fires are submitted (a user's save, another replica) submits
// nothing.
func TestWorkWithALostClaimFiresNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    func() domain.Schedule
		now  time.Time
	}{
		{"the fire due now", hourly, base.Add(time.Second)},
		{"fires caught up", catchUp, base.Add(3*time.Hour + 10*time.Minute)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store, runs := &fakeClaims{s: tt.s()}, newFakeRuns()
			store.before = func(f *fakeClaims) error { f.claim = "replica/2"; return nil }
			_, err := work(t, &Firer{Store: store, Runs: runs}, store, tt.now)
			require.ErrorIs(t, err, domain.ErrConflict)
			assert.Empty(t, runs.keys)
		})
	}
}

// A fire the runs service cannot take now stays pending and is tried again; one it refuses
// for the caller's reasons makes no run and is not tried again.
func TestWorkRetriesOnlyWhatMaySucceed(t *testing.T) {
	t.Parallel()
	store, runs := &fakeClaims{s: hourly()}, newFakeRuns()
	f := &Firer{Store: store, Runs: runs, RetryAfter: 5 * time.Second}
	runs.fail = apperr.New(apperr.DependencyUnavailable, "runs is down")
	kept, err := work(t, f, store, base.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, []time.Time{base}, store.s.Pending)
	assert.True(t, store.s.Due().Equal(base.Add(6*time.Second)), "tried again after RetryAfter, not at once")
	assert.False(t, kept, "let go: its retry is later than the claim horizon")
	store.claim = ""
	_, err = work(t, f, store, base.Add(7*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []string{"s1@2026-11-27T10:00:00Z"}, runs.keys)

	store, runs = &fakeClaims{s: hourly()}, newFakeRuns()
	runs.fail = apperr.New(apperr.WorkflowRunTriggerDisabled, "the schedule trigger is off")
	_, err = work(t, &Firer{Store: store, Runs: runs}, store, base.Add(time.Second))
	require.NoError(t, err)
	assert.Empty(t, store.s.Pending)
	assert.True(t, store.s.Next.Equal(base.Add(time.Hour)))
}

// Each overlap policy, with the previous run still going.
func TestWorkOverlap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		policy    domain.OverlapPolicy
		keys      []string
		cancelled []string
		buffered  bool
	}{
		{domain.OverlapAllow, []string{"s1@2026-11-27T10:00:00Z"}, nil, false},
		{domain.OverlapSkip, nil, nil, false},
		{domain.OverlapBufferOne, nil, nil, true},
		{domain.OverlapCancelOther, []string{"s1@2026-11-27T10:00:00Z"}, []string{"previous"}, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			s := hourly()
			s.Overlap, s.LastRun = tt.policy, "previous"
			store, runs := &fakeClaims{s: s}, newFakeRuns()
			_, err := work(t, &Firer{Store: store, Runs: runs}, store, base.Add(time.Second))
			require.NoError(t, err)
			assert.Equal(t, tt.keys, runs.keys)
			assert.Equal(t, tt.cancelled, runs.cancelled)
			assert.Equal(t, tt.buffered, !store.s.Buffered.IsZero())
		})
	}
}

// A buffered fire waits for the previous run, keeps only the first fire, and starts under
// its own key once the previous run ends.
func TestWorkBufferOne(t *testing.T) {
	t.Parallel()
	s := hourly()
	s.Overlap, s.LastRun = domain.OverlapBufferOne, "previous"
	store, runs := &fakeClaims{s: s}, newFakeRuns()
	f := &Firer{Store: store, Runs: runs, RecheckAfter: 5 * time.Second}
	_, err := work(t, f, store, base.Add(time.Second))
	require.NoError(t, err)
	assert.True(t, store.s.Buffered.Equal(base))
	assert.True(t, store.s.Due().Equal(base.Add(6*time.Second)), "it looks again at the previous run")

	store.claim = ""
	_, err = work(t, f, store, base.Add(time.Hour+time.Second)) // the next fire: still going
	require.NoError(t, err)
	assert.True(t, store.s.Buffered.Equal(base), "the first fire is kept, the later dropped")
	assert.Empty(t, runs.keys)

	runs.ended["previous"] = true
	store.claim = ""
	_, err = work(t, f, store, base.Add(time.Hour+7*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []string{"s1@2026-11-27T10:00:00Z"}, runs.keys)
	assert.True(t, store.s.Buffered.IsZero())
	assert.Equal(t, "run-s1@2026-11-27T10:00:00Z", store.s.LastRun)
}
