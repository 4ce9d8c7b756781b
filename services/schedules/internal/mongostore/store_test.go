package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/mongostore"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// kinds are the stores every test runs against: the shared one, whose database checks
// the writes' conditions, and the exclusive one, which checks them itself.
var kinds = []struct {
	name string
	opts []mongostore.Option
}{
	{"shared", nil},
	{"exclusive", []mongostore.Option{mongostore.Exclusive()}},
}

// eachKind runs test on a new store of each kind.
func eachKind(t *testing.T, test func(t *testing.T, s *mongostore.Store)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			test(t, newStore(t, k.opts...))
		})
	}
}

func newStore(t *testing.T, opts ...mongostore.Option) *mongostore.Store {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	box, err := secrets.New(make([]byte, secrets.KeySize))
	require.NoError(t, err)
	s := mongostore.New(client.Database(testkit.Database(t)), box, opts...)
	require.NoError(t, s.EnsureIndexes(context.Background()))
	return s
}

func schedule(id, team, workflow string, typ domain.Type, status domain.Status, created time.Time) *domain.Schedule {
	return &domain.Schedule{ID: id, Team: team, Name: "n-" + id, Workflow: workflow, Type: typ, Status: status,
		Cron: "0 2 * * *", Timezone: "Europe/Paris", Overlap: domain.OverlapAllow, Misfire: domain.MisfireFireAll,
		CatchupWindow: 6 * time.Hour, Params: map[string]any{"env.name": "prod", "$n": 2.0}, Labels: map[string]string{"tier": "1"},
		Next: created.Add(time.Hour), Created: created, Secret: []string{"$n"},
		CreatedBy: domain.Initiator{Type: "user", ID: "u1", Name: "Ada", Person: "u1"}}
}

func TestScheduleStore(t *testing.T) {
	t.Parallel()
	eachKind(t, testScheduleStore)
}

func testScheduleStore(t *testing.T, s *mongostore.Store) {
	ctx := context.Background()
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

// Replicas claim what is due soon and free; only the holder of a claim stores through it,
// and any other save lets the claim go.
func TestClaims(t *testing.T) {
	t.Parallel()
	eachKind(t, testClaims)
}

func testClaims(t *testing.T, s *mongostore.Store) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	soon := schedule("soon", "ops", "build", domain.TypeCron, domain.StatusActive, now)
	soon.Next = now.Add(time.Second)
	later := schedule("later", "ops", "build", domain.TypeCron, domain.StatusActive, now)
	later.Next = now.Add(time.Hour)
	paused := schedule("paused", "ops", "build", domain.TypeCron, domain.StatusInactive, now)
	paused.Next = now
	for _, x := range []*domain.Schedule{soon, later, paused} {
		require.NoError(t, s.CreateSchedule(ctx, x))
	}
	horizon, until := now.Add(2*time.Second), now.Add(20*time.Second)
	got, err := s.ClaimDue(ctx, "r1/1", horizon, now, until, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "soon", got[0].ID)
	assert.Equal(t, map[string]any{"env.name": "prod", "$n": 2.0}, got[0].Params)

	again, err := s.ClaimDue(ctx, "r2/1", horizon, now, until, 10)
	require.NoError(t, err)
	assert.Empty(t, again, "held by r1 until its lease ends")
	for _, tt := range []struct {
		id, token string
		want      bool
	}{{"soon", "r1/1", true}, {"soon", "r2/1", false}, {"later", "r1/1", false}, {"nope", "r1/1", false}} {
		held, err := s.Holds(ctx, tt.id, tt.token)
		require.NoError(t, err)
		assert.Equal(t, tt.want, held, "%s holds %s", tt.token, tt.id)
	}

	mine := got[0]
	mine.Pending, mine.Next = []time.Time{now.Add(time.Second)}, now.Add(2*time.Second)
	require.NoError(t, s.Keep(ctx, mine, "r1/1", until))
	assert.True(t, errors.Is(s.Keep(ctx, mine, "r2/1", until), domain.ErrConflict), "not r2's claim")

	lapsed, err := s.ClaimDue(ctx, "r2/2", horizon.Add(time.Minute), until.Add(time.Second), until.Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, lapsed, 1, "a lapsed claim is taken up")
	assert.Equal(t, []time.Time{now.Add(time.Second)}, lapsed[0].Pending, "with its pending fires")
	assert.True(t, errors.Is(s.Keep(ctx, mine, "r1/1", time.Time{}), domain.ErrConflict), "r1 lost it")

	user, err := s.FindSchedule(ctx, "ops", "soon")
	require.NoError(t, err)
	user.Description = "changed"
	require.NoError(t, s.SaveSchedule(ctx, user))
	held, err := s.Holds(ctx, "soon", "r2/2")
	require.NoError(t, err)
	assert.False(t, held, "a user's save lets the claim go")
	assert.True(t, errors.Is(s.Keep(ctx, lapsed[0], "r2/2", time.Time{}), domain.ErrConflict), "a user's save lets the claim go")
	free, err := s.ClaimDue(ctx, "r3/1", horizon.Add(time.Minute), now, until, 10)
	require.NoError(t, err)
	assert.Len(t, free, 1)
}

// The end of the run a buffered fire waits for makes its schedule due at once; the end
// of any other run changes nothing.
func TestNudgeBuffered(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *mongostore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		waits := schedule("waits", "ops", "build", domain.TypeCron, domain.StatusActive, now)
		waits.Overlap, waits.LastRun, waits.Buffered, waits.Recheck = domain.OverlapBufferOne, "r1", now, now.Add(30*time.Second)
		plain := schedule("plain", "ops", "build", domain.TypeCron, domain.StatusActive, now)
		plain.LastRun = "r1"
		for _, x := range []*domain.Schedule{waits, plain} {
			require.NoError(t, s.CreateSchedule(ctx, x))
		}
		for _, tt := range []struct {
			id, run string
			want    bool
		}{{"waits", "r0", false}, {"plain", "r1", false}, {"nope", "r1", false}, {"waits", "r1", true}} {
			nudged, err := s.NudgeBuffered(ctx, tt.id, tt.run, now.Add(time.Second))
			require.NoError(t, err)
			assert.Equal(t, tt.want, nudged, "%s after %s", tt.id, tt.run)
		}
		got, err := s.ClaimDue(ctx, "r1/1", now.Add(2*time.Second), now.Add(time.Second), now.Add(time.Minute), 10)
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, "waits", got[0].ID)
		assert.True(t, got[0].Recheck.Equal(now.Add(time.Second)), "recheck %s", got[0].Recheck)
	})
}

// Schedules firing at one instant are stored side by side, each as its holder wrote it.
func TestKeepsSideBySide(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *mongostore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		const n = 30
		for i := range n {
			x := schedule(fmt.Sprintf("s%02d", i), "ops", "build", domain.TypeCron, domain.StatusActive, now)
			x.Next = now.Add(time.Second)
			require.NoError(t, s.CreateSchedule(ctx, x))
		}
		got, err := s.ClaimDue(ctx, "r1/1", now.Add(2*time.Second), now, now.Add(20*time.Second), n)
		require.NoError(t, err)
		require.Len(t, got, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i, x := range got {
			x.Last, x.Next, x.LastRun = now.Add(time.Second), now.Add(time.Hour), "run-"+x.ID
			wg.Go(func() { errs[i] = s.Keep(ctx, x, "r1/1", time.Time{}) })
		}
		wg.Wait()
		for i, x := range got {
			require.NoError(t, errs[i], x.ID)
			back, err := s.FindSchedule(ctx, "ops", x.ID)
			require.NoError(t, err)
			assert.Equal(t, "run-"+x.ID, back.LastRun)
			assert.Equal(t, x.Version, back.Version)
		}
	})
}

// A write that fails leaves the store as its database is: the schedule is claimed and
// saved again as if the write had never been tried.
func TestFailedWrite(t *testing.T) {
	t.Parallel()
	eachKind(t, func(t *testing.T, s *mongostore.Store) {
		ctx := context.Background()
		now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		horizon, until := now.Add(2*time.Second), now.Add(20*time.Second)
		x := schedule("x", "ops", "build", domain.TypeCron, domain.StatusActive, now)
		x.Next = now.Add(time.Second)
		require.NoError(t, s.CreateSchedule(ctx, x))
		got, err := s.ClaimDue(ctx, "r1/1", horizon, now, until, 10)
		require.NoError(t, err)
		require.Len(t, got, 1)

		gone, cancel := context.WithCancel(ctx)
		cancel()
		moved := *got[0]
		moved.Next = now.Add(time.Hour)
		require.Error(t, s.Keep(gone, &moved, "r1/1", time.Time{}))

		back, err := s.FindSchedule(ctx, "ops", "x")
		require.NoError(t, err)
		assert.True(t, back.Next.Equal(now.Add(time.Second)), "not written: next %s", back.Next)
		back.Description = "saved on the version read"
		require.NoError(t, s.SaveSchedule(ctx, back))
		again, err := s.ClaimDue(ctx, "r1/2", horizon, now, until, 10)
		require.NoError(t, err)
		require.Len(t, again, 1, "still due")
		assert.Equal(t, "saved on the version read", again[0].Description)
		require.NoError(t, s.Keep(ctx, again[0], "r1/2", time.Time{}))
	})
}

// An exclusive store started on a database learns its schedules from it, and holds no
// claims of the store before it: a restarted process fires what the last one claimed.
func TestExclusiveStoreRestarted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(ctx) })
	db := client.Database(testkit.Database(t))
	box, err := secrets.New(make([]byte, secrets.KeySize))
	require.NoError(t, err)
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	horizon, until := now.Add(2*time.Second), now.Add(20*time.Second)

	first := mongostore.New(db, box, mongostore.Exclusive())
	due := schedule("due", "ops", "build", domain.TypeCron, domain.StatusActive, now)
	due.Next = now.Add(time.Second)
	require.NoError(t, first.CreateSchedule(ctx, due))
	got, err := first.ClaimDue(ctx, "r1/1", horizon, now, until, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)

	second := mongostore.New(db, box, mongostore.Exclusive())
	again, err := second.ClaimDue(ctx, "r2/1", horizon, now, until, 10)
	require.NoError(t, err)
	require.Len(t, again, 1, "the claim of the store before is gone with it")
	assert.Equal(t, "due", again[0].ID)
	again[0].Next = now.Add(time.Hour)
	require.NoError(t, second.Keep(ctx, again[0], "r2/1", time.Time{}))
	stale := *again[0]
	stale.Version--
	assert.True(t, errors.Is(second.SaveSchedule(ctx, &stale), domain.ErrConflict), "versions are read from the database")
	none, err := second.ClaimDue(ctx, "r2/2", horizon, now, until, 10)
	require.NoError(t, err)
	assert.Empty(t, none, "moved past the horizon")
}

// Params are sealed at rest: they may hold the workflow's passwords.
func TestParamsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(ctx) })
	db := client.Database(testkit.Database(t))
	box, err := secrets.New(make([]byte, secrets.KeySize))
	require.NoError(t, err)
	s := mongostore.New(db, box)
	x := schedule("x", "ops", "build", domain.TypeCron, domain.StatusActive, time.Now())
	x.Params = map[string]any{"token": "hunter2"}
	require.NoError(t, s.CreateSchedule(ctx, x))
	raw, err := db.Collection("schedules").FindOne(ctx, map[string]any{"_id": "x"}).Raw()
	require.NoError(t, err)
	assert.NotContains(t, raw.String(), "hunter2")
	back, err := s.FindSchedule(ctx, "ops", "x")
	require.NoError(t, err)
	assert.Equal(t, "hunter2", back.Params["token"])
}
