package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// fakeStore is a Store in memory; beforeSave, when set, runs before each save (another
// writer, or a failure).
type fakeStore struct {
	mu         sync.Mutex
	m          map[string]domain.Schedule
	beforeSave func(s *fakeStore) error
}

func (f *fakeStore) CreateSchedule(_ context.Context, s *domain.Schedule) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	s.Version = 1
	f.m[s.ID] = *s
	return nil
}

func (f *fakeStore) FindSchedule(_ context.Context, team, id string) (*domain.Schedule, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.m[id]
	if !ok || s.Team != team {
		return nil, apperr.New(apperr.ScheduleNotFound, "no schedule %s", id)
	}
	return &s, nil
}

func (f *fakeStore) SaveSchedule(_ context.Context, s *domain.Schedule) error {
	if f.beforeSave != nil {
		hook := f.beforeSave
		f.beforeSave = nil
		if err := hook(f); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m[s.ID].Version != s.Version {
		return domain.ErrConflict
	}
	s.Version++
	f.m[s.ID] = *s
	return nil
}

func (f *fakeStore) FindSchedules(context.Context, Filter, page.Request) ([]*domain.Schedule, int64, error) {
	return nil, 0, errors.New("not used")
}

func (f *fakeStore) DeleteTeamSchedules(context.Context, string) error { return errors.New("not used") }

// submitted records the fires' keys as the runs service would see them.
type submitted struct {
	mu   sync.Mutex
	keys []string
}

func (s *submitted) SubmitFire(_ context.Context, sch *domain.Schedule, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, domain.FireKey(sch.ID, at))
	return nil
}

func TestFire(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	hourly := func() domain.Schedule {
		return domain.Schedule{ID: "s1", Team: "ops", Workflow: "build", Type: domain.TypeCron, Status: domain.StatusActive,
			Cron: "0 * * * *", Timezone: "UTC", Misfire: domain.MisfireFireOnce, Next: base}
	}
	tests := []struct {
		name     string
		s        func() domain.Schedule
		now      time.Time
		keys     []string
		next     time.Time
		status   domain.Status
		unstored bool
	}{
		{"due", hourly, base.Add(time.Second), []string{"s1@2026-11-27T10:00:00Z"}, base.Add(time.Hour), domain.StatusActive, false},
		{"not due yet", hourly, base.Add(-time.Second), nil, base, domain.StatusActive, true},
		{"paused", func() domain.Schedule { s := hourly(); s.Status = domain.StatusInactive; return s }, base.Add(time.Second), nil, base, domain.StatusInactive, true},
		{"its trigger off", func() domain.Schedule { s := hourly(); s.TriggerDisabled = true; return s }, base.Add(time.Second), nil, base, domain.StatusActive, true},
		{"run once", func() domain.Schedule {
			return domain.Schedule{ID: "s1", Team: "ops", Type: domain.TypeRunOnce, Status: domain.StatusActive, Date: base, Next: base, Timezone: "UTC"}
		}, base.Add(time.Second), []string{"s1@2026-11-27T10:00:00Z"}, time.Time{}, domain.StatusCompleted, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := &fakeStore{m: map[string]domain.Schedule{}}
			s := tt.s()
			require.NoError(t, store.CreateSchedule(context.Background(), &s))
			runs := &submitted{}
			f := &Firer{Store: store, Runs: runs}
			got, err := f.Fire(context.Background(), "ops", "s1", tt.now)
			require.NoError(t, err)
			assert.Equal(t, tt.keys, runs.keys)
			assert.True(t, tt.next.Equal(got.Next), "next %s", got.Next)
			assert.Equal(t, tt.status, got.Status)
			stored, err := store.FindSchedule(context.Background(), "ops", "s1")
			require.NoError(t, err)
			assert.Equal(t, tt.unstored, stored.Version == 1, "stored only when it moved")
		})
	}
}

// hourlyFiring is a Firer over schedule s1 of team ops, hourly and due at the base time
// it answers.
func hourlyFiring(t *testing.T) (*fakeStore, *submitted, *Firer, time.Time) {
	t.Helper()
	base := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	store := &fakeStore{m: map[string]domain.Schedule{}}
	s := domain.Schedule{ID: "s1", Team: "ops", Type: domain.TypeCron, Status: domain.StatusActive, Cron: "0 * * * *", Timezone: "UTC", Next: base}
	require.NoError(t, store.CreateSchedule(context.Background(), &s))
	runs := &submitted{}
	return store, runs, &Firer{Store: store, Runs: runs}, base
}

// A replica that dies between submitting a fire and moving the schedule on leaves the fire
// to the next, which submits it again under the same key: one run.
func TestFireCutShortIsMadeAgainUnderTheSameKey(t *testing.T) {
	t.Parallel()
	store, runs, f, base := hourlyFiring(t)
	store.beforeSave = func(*fakeStore) error { return errors.New("the replica died") }
	_, err := f.Fire(context.Background(), "ops", "s1", base.Add(time.Second))
	require.Error(t, err)
	got, err := f.Fire(context.Background(), "ops", "s1", base.Add(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, []string{"s1@2026-11-27T10:00:00Z", "s1@2026-11-27T10:00:00Z"}, runs.keys, "submitted twice, one key: one run")
	assert.True(t, got.Next.Equal(base.Add(time.Hour)))
}

// Two replicas firing one schedule at once: the one that loses the save reads the other's
// move and fires nothing past it.
func TestFireLosingTheSaveTakesTheOtherMove(t *testing.T) {
	t.Parallel()
	store, runs, f, base := hourlyFiring(t)
	store.beforeSave = func(st *fakeStore) error {
		// The other replica fires and saves first.
		other := &Firer{Store: st, Runs: runs}
		_, err := other.Fire(context.Background(), "ops", "s1", base.Add(time.Second))
		return err
	}
	got, err := f.Fire(context.Background(), "ops", "s1", base.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, []string{"s1@2026-11-27T10:00:00Z", "s1@2026-11-27T10:00:00Z"}, runs.keys, "both submitted the one fire: one run")
	assert.True(t, got.Next.Equal(base.Add(time.Hour)))
	assert.EqualValues(t, 2, got.Version, "moved once")
}
