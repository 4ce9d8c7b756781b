package mongostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/mongostore"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newStore(t *testing.T) *mongostore.Store {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	s := mongostore.New(client.Database(testkit.Database(t)))
	require.NoError(t, s.EnsureIndexes(context.Background()))
	return s
}

func schedule(id, team, workflow string, typ domain.Type, status domain.Status, created time.Time) *domain.Schedule {
	return &domain.Schedule{ID: id, Team: team, Name: "n-" + id, Workflow: workflow, Type: typ, Status: status,
		Cron: "0 2 * * *", Timezone: "Europe/Paris", Overlap: domain.OverlapAllow, Misfire: domain.MisfireFireAll,
		CatchupWindow: 6 * time.Hour, Params: map[string]any{"env.name": "prod", "$n": 2.0}, Labels: map[string]string{"tier": "1"},
		Next: created.Add(time.Hour), Created: created}
}

func TestScheduleStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	a := schedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at)
	require.NoError(t, s.CreateSchedule(ctx, a))
	assert.EqualValues(t, 1, a.Version)
	assert.True(t, errors.Is(s.CreateSchedule(ctx, schedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at)), domain.ErrConflict))

	got, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	assert.Equal(t, a, got, "read back as written, params with any names")
	_, err = s.FindSchedule(ctx, "other", "a")
	assert.True(t, apperr.HasReason(err, apperr.ScheduleNotFound), "another team's: %v", err)
	_, err = s.FindSchedule(ctx, "ops", "nope")
	assert.True(t, apperr.HasReason(err, apperr.ScheduleNotFound))

	stale := *got
	got.Status, got.Last = domain.StatusInactive, at.Add(time.Hour)
	require.NoError(t, s.SaveSchedule(ctx, got))
	assert.EqualValues(t, 2, got.Version)
	assert.True(t, errors.Is(s.SaveSchedule(ctx, &stale), domain.ErrConflict), "a write on a version moved since")
	back, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	assert.Equal(t, domain.StatusInactive, back.Status)

	for i, x := range []*domain.Schedule{
		schedule("b", "ops", "deploy", domain.TypeRunOnce, domain.StatusCompleted, at.Add(time.Minute)),
		schedule("c", "ops", "build", domain.TypeAdvancedCron, domain.StatusActive, at.Add(2*time.Minute)),
		schedule("d", "other", "build", domain.TypeCron, domain.StatusActive, at),
	} {
		require.NoError(t, s.CreateSchedule(ctx, x), i)
	}
	ids := func(f app.Filter, r page.Request) ([]string, int64) {
		list, total, err := s.FindSchedules(ctx, f, r)
		require.NoError(t, err)
		var out []string
		for _, x := range list {
			out = append(out, x.ID)
		}
		return out, total
	}
	all := page.Request{Size: 10}
	tests := []struct {
		name  string
		f     app.Filter
		r     page.Request
		want  []string
		total int64
	}{
		{"a team's, oldest first", app.Filter{Team: "ops"}, all, []string{"a", "b", "c"}, 3},
		{"by status", app.Filter{Team: "ops", Statuses: []domain.Status{domain.StatusActive, domain.StatusCompleted}}, all, []string{"b", "c"}, 2},
		{"by type", app.Filter{Team: "ops", Types: []domain.Type{domain.TypeRunOnce}}, all, []string{"b"}, 1},
		{"by workflow", app.Filter{Team: "ops", Workflows: []string{"build"}}, all, []string{"a", "c"}, 2},
		{"by id", app.Filter{Team: "ops", IDs: []string{"c", "d"}}, all, []string{"c"}, 1},
		{"a page", app.Filter{Team: "ops"}, page.Request{Number: 1, Size: 2}, []string{"c"}, 3},
		{"operators are values", app.Filter{Team: "ops", Workflows: []string{`{"$ne":""}`}}, all, nil, 0},
	}
	for _, tt := range tests {
		got, total := ids(tt.f, tt.r)
		assert.Equal(t, tt.want, got, tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}

	require.NoError(t, s.DeleteTeamSchedules(ctx, "ops"))
	got2, total := ids(app.Filter{Team: "ops"}, all)
	assert.Empty(t, got2)
	assert.Zero(t, total)
	_, total = ids(app.Filter{Team: "other"}, all)
	assert.EqualValues(t, 1, total, "another team's stay")
}
