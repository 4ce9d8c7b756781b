// Package storetest is the contract every store of the schedules service keeps, as one
// suite of tests run against each implementation (mongostore on a MongoDB-wire server,
// sqlitestore on a SQLite file): what the use cases and the scheduler rely on, whatever
// keeps the data.
package storetest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Store is what a store of the service implements: the use cases' and the scheduler's.
type Store interface {
	app.Store
	app.Claims
}

// Harness makes the stores of one implementation.
type Harness struct {
	// New returns an empty store for one test.
	New func(t *testing.T) Store
	// AtRest answers everything s keeps, as bytes, as someone reading its files or its
	// database would see them.
	AtRest func(t *testing.T, s Store) []byte
}

// Run runs the whole contract against the stores h makes.
func Run(t *testing.T, h Harness) {
	tests := []struct {
		name string
		test func(t *testing.T, s Store)
	}{
		{"schedules are created once and read back whole, by their team only", createAndFind},
		{"a save is stored on the version it was read at, or not at all", saveIsConditional},
		{"searches filter by id, status, type and workflow and page oldest first with exact totals", searches},
		{"a workflow's schedules are found, archived ones too", workflowSchedules},
		{"schedules due and free are claimed, earliest first, up to a limit", claimDue},
		{"a claim is kept by its holder only, taken up once lapsed, and let go by a save", claims},
		{"two claimers never get the same schedule", claimsAreExclusive},
		{"two writers on one version: one wins", savesAreExclusive},
		{"a schedule with nothing to do is never claimed", nothingToDo},
		{"the end of the run a buffered fire waits for makes its schedule due", nudgeBuffered},
		{"schedules firing at one instant are stored side by side", keepsSideBySide},
		{"a write that was not made leaves the schedule as it was", writeNotMade},
		{"a deleted team leaves nothing behind", deleteTeam},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.test(t, h.New(t))
		})
	}
	t.Run("params are sealed at rest", func(t *testing.T) {
		t.Parallel()
		sealedAtRest(t, h)
	})
}

// at is a time every store keeps exactly: UTC, to the millisecond.
var at = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// newSchedule is an active cron schedule of team's workflow, made at created, next
// firing an hour later.
func newSchedule(id, team, workflow string, typ domain.Type, status domain.Status, created time.Time) *domain.Schedule {
	return &domain.Schedule{ID: id, Team: team, Name: "n-" + id, Description: "about " + id, Workflow: workflow, Type: typ, Status: status,
		Cron: "0 2 * * *", Timezone: "Europe/Paris", Overlap: domain.OverlapAllow, Misfire: domain.MisfireFireAll,
		CatchupWindow: 6 * time.Hour, Params: map[string]any{"env.name": "prod", "$n": 2.0, "list": []any{"a", 1.0}},
		Labels: map[string]string{"tier": "1", "a.b": "$c"}, Next: created.Add(time.Hour), Created: created, Secret: []string{"$n"},
		CreatedBy: domain.Initiator{Type: "user", ID: "u1", Name: "Ada", Person: "u1"}}
}

// due makes a cron schedule of ops/build next firing at next.
func due(id string, next time.Time) *domain.Schedule {
	s := newSchedule(id, "ops", "build", domain.TypeCron, domain.StatusActive, at)
	s.Next = next
	return s
}

func create(t *testing.T, s Store, all ...*domain.Schedule) {
	t.Helper()
	for _, x := range all {
		require.NoError(t, s.CreateSchedule(context.Background(), x), x.ID)
	}
}

func ids(list []*domain.Schedule) []string {
	out := []string{}
	for _, x := range list {
		out = append(out, x.ID)
	}
	return out
}

func createAndFind(t *testing.T, s Store) {
	ctx := context.Background()
	a := newSchedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at)
	a.Last, a.LastRun, a.Pending = at.Add(-time.Hour), "run-1", []time.Time{at.Add(-time.Minute), at}
	a.Overlap, a.Buffered, a.Recheck = domain.OverlapBufferOne, at.Add(-2*time.Minute), at.Add(30*time.Second)
	require.NoError(t, s.CreateSchedule(ctx, a))
	assert.EqualValues(t, 1, a.Version)
	again := newSchedule("a", "ops", "other", domain.TypeCron, domain.StatusActive, at)
	assert.ErrorIs(t, s.CreateSchedule(ctx, again), domain.ErrConflict, "an id is taken once")

	got, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	assert.Equal(t, a, got, "read back as written, params and labels with any names")
	runOnce := newSchedule("once", "ops", "build", domain.TypeRunOnce, domain.StatusActive, at)
	runOnce.Cron, runOnce.Date, runOnce.Params, runOnce.Labels, runOnce.Secret = "", at.Add(time.Hour), nil, nil, nil
	create(t, s, runOnce)
	got, err = s.FindSchedule(ctx, "ops", "once")
	require.NoError(t, err)
	assert.Equal(t, runOnce, got, "nothing read back as nothing")

	for _, tt := range []struct{ team, id string }{{"other", "a"}, {"ops", "nope"}} {
		_, err := s.FindSchedule(ctx, tt.team, tt.id)
		assert.True(t, apperr.HasReason(err, apperr.ScheduleNotFound), "%s of %s: %v", tt.id, tt.team, err)
	}
}

func saveIsConditional(t *testing.T, s Store) {
	ctx := context.Background()
	create(t, s, newSchedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at))
	got, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	stale := *got
	got.Status, got.Last, got.Workflow, got.Params = domain.StatusInactive, at.Add(time.Hour), "deploy", map[string]any{"x": "y"}
	require.NoError(t, s.SaveSchedule(ctx, got))
	assert.EqualValues(t, 2, got.Version)
	assert.ErrorIs(t, s.SaveSchedule(ctx, &stale), domain.ErrConflict, "a write on a version moved since")
	back, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	assert.Equal(t, got, back, "the save that won is what is stored")

	gone := newSchedule("gone", "ops", "build", domain.TypeCron, domain.StatusActive, at)
	gone.Version = 1
	assert.ErrorIs(t, s.SaveSchedule(ctx, gone), domain.ErrConflict, "a schedule not stored")
}

func searches(t *testing.T, s Store) {
	ctx := context.Background()
	create(t, s,
		newSchedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at),
		newSchedule("b", "ops", "deploy", domain.TypeRunOnce, domain.StatusCompleted, at.Add(time.Minute)),
		newSchedule("c", "ops", "build", domain.TypeAdvancedCron, domain.StatusActive, at.Add(2*time.Minute)),
		newSchedule("e", "ops", "test", domain.TypeCron, domain.StatusArchived, at.Add(2*time.Minute)),
		newSchedule("d", "other", "build", domain.TypeCron, domain.StatusActive, at),
	)
	all := page.Request{Size: 10}
	tests := []struct {
		name  string
		f     app.Filter
		r     page.Request
		want  []string
		total int64
	}{
		{"a team's, oldest first, ties by id", app.Filter{Team: "ops"}, all, []string{"a", "b", "c", "e"}, 4},
		{"by status", app.Filter{Team: "ops", Statuses: []domain.Status{domain.StatusActive, domain.StatusCompleted}}, all, []string{"a", "b", "c"}, 3},
		{"by type", app.Filter{Team: "ops", Types: []domain.Type{domain.TypeRunOnce}}, all, []string{"b"}, 1},
		{"by workflow", app.Filter{Team: "ops", Workflows: []string{"build", "test"}}, all, []string{"a", "c", "e"}, 3},
		{"by id, of the team only", app.Filter{Team: "ops", IDs: []string{"c", "d"}}, all, []string{"c"}, 1},
		{"filters together", app.Filter{Team: "ops", Workflows: []string{"build"}, Types: []domain.Type{domain.TypeCron}}, all, []string{"a"}, 1},
		{"a page", app.Filter{Team: "ops"}, page.Request{Number: 1, Size: 3}, []string{"e"}, 4},
		{"a page past the end", app.Filter{Team: "ops"}, page.Request{Number: 5, Size: 3}, []string{}, 4},
		{"a team with none", app.Filter{Team: "nobody"}, all, []string{}, 0},
		{"operators are values", app.Filter{Team: "ops", Workflows: []string{`{"$ne":""}`, `' OR 1=1 --`}}, all, []string{}, 0},
	}
	for _, tt := range tests {
		list, total, err := s.FindSchedules(ctx, tt.f, tt.r)
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, ids(list), tt.name)
		assert.Equal(t, tt.total, total, tt.name)
	}
	list, _, err := s.FindSchedules(ctx, app.Filter{Team: "ops", IDs: []string{"a"}}, all)
	require.NoError(t, err)
	require.Len(t, list, 1)
	want, err := s.FindSchedule(ctx, "ops", "a")
	require.NoError(t, err)
	assert.Equal(t, want, list[0], "a search reads schedules whole")
}

func workflowSchedules(t *testing.T, s Store) {
	ctx := context.Background()
	create(t, s,
		newSchedule("a", "ops", "build", domain.TypeCron, domain.StatusActive, at),
		newSchedule("b", "ops", "build", domain.TypeCron, domain.StatusArchived, at),
		newSchedule("c", "ops", "deploy", domain.TypeCron, domain.StatusActive, at),
		newSchedule("d", "other", "build", domain.TypeCron, domain.StatusActive, at),
	)
	got, err := s.FindWorkflowSchedules(ctx, "ops", "build")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, ids(got))
	got, err = s.FindWorkflowSchedules(ctx, "ops", "nope")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func claimDue(t *testing.T, s Store) {
	ctx := context.Background()
	create(t, s, due("third", at.Add(1500*time.Millisecond)), due("first", at.Add(-time.Minute)), due("second", at.Add(time.Second)),
		due("later", at.Add(time.Hour)))
	horizon, until := at.Add(2*time.Second), at.Add(20*time.Second)
	got, err := s.ClaimDue(ctx, "r1/1", horizon, at, until, 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"first", "second"}, ids(got), "earliest first, up to the limit")
	assert.Equal(t, map[string]any{"env.name": "prod", "$n": 2.0, "list": []any{"a", 1.0}}, got[0].Params, "read whole")
	stored, err := s.FindSchedule(ctx, "ops", "first")
	require.NoError(t, err)
	assert.Equal(t, stored, got[0], "as stored")
	rest, err := s.ClaimDue(ctx, "r1/2", horizon, at, until, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"third"}, ids(rest), "the rest due by the horizon")
}

func claims(t *testing.T, s Store) {
	ctx := context.Background()
	soon := due("soon", at.Add(time.Second))
	paused := due("paused", at)
	paused.Status = domain.StatusInactive
	create(t, s, soon, due("later", at.Add(time.Hour)), paused)
	horizon, until := at.Add(2*time.Second), at.Add(20*time.Second)
	got, err := s.ClaimDue(ctx, "r1/1", horizon, at, until, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"soon"}, ids(got))

	again, err := s.ClaimDue(ctx, "r2/1", horizon, at.Add(19*time.Second), until, 10)
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
	mine.Pending, mine.Next = []time.Time{at.Add(time.Second)}, at.Add(2*time.Second)
	require.NoError(t, s.Keep(ctx, mine, "r1/1", until))
	assert.EqualValues(t, 2, mine.Version, "a keep moves the version")
	assert.ErrorIs(t, s.Keep(ctx, mine, "r2/1", until), domain.ErrConflict, "not r2's claim")
	held, err := s.Holds(ctx, "soon", "r1/1")
	require.NoError(t, err)
	assert.True(t, held, "kept")

	lapsed, err := s.ClaimDue(ctx, "r2/2", horizon.Add(time.Minute), until.Add(time.Second), until.Add(time.Minute), 10)
	require.NoError(t, err)
	require.Equal(t, []string{"soon"}, ids(lapsed), "a lapsed claim is taken up")
	assert.Equal(t, []time.Time{at.Add(time.Second)}, lapsed[0].Pending, "with its pending fires")
	assert.ErrorIs(t, s.Keep(ctx, mine, "r1/1", time.Time{}), domain.ErrConflict, "r1 lost it")

	user, err := s.FindSchedule(ctx, "ops", "soon")
	require.NoError(t, err)
	user.Description = "changed"
	require.NoError(t, s.SaveSchedule(ctx, user))
	held, err = s.Holds(ctx, "soon", "r2/2")
	require.NoError(t, err)
	assert.False(t, held, "a user's save lets the claim go")
	assert.ErrorIs(t, s.Keep(ctx, lapsed[0], "r2/2", time.Time{}), domain.ErrConflict, "a user's save lets the claim go")
	free, err := s.ClaimDue(ctx, "r3/1", horizon.Add(time.Minute), at, until, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"soon"}, ids(free), "free again")

	// A holder letting go (a zero until) leaves the schedule to the next claim.
	free[0].Next = at.Add(time.Second)
	require.NoError(t, s.Keep(ctx, free[0], "r3/1", time.Time{}))
	held, err = s.Holds(ctx, "soon", "r3/1")
	require.NoError(t, err)
	assert.False(t, held, "let go")
	next, err := s.ClaimDue(ctx, "r4/1", horizon, at, until, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"soon"}, ids(next), "claimed by the next")
}

// claimsAreExclusive has two claimers poll side by side, as two replicas would, while the
// schedules come due: each schedule is claimed by one of them, once.
func claimsAreExclusive(t *testing.T, s Store) {
	ctx := context.Background()
	const n = 60
	for i := range n {
		create(t, s, due(fmt.Sprintf("s%02d", i), at.Add(time.Duration(i%6)*time.Second)))
	}
	until := at.Add(time.Hour)
	var mu sync.Mutex
	byWhom := map[string][]string{}
	var wg sync.WaitGroup
	for _, who := range []string{"r1", "r2"} {
		wg.Go(func() {
			for step := range 8 {
				horizon := at.Add(time.Duration(step) * time.Second)
				got, err := s.ClaimDue(ctx, fmt.Sprintf("%s/%d", who, step), horizon, at, until, 7)
				if !assert.NoError(t, err) {
					return
				}
				mu.Lock()
				for _, x := range got {
					byWhom[x.ID] = append(byWhom[x.ID], who)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// What is left, claimed by one last poll.
	rest, err := s.ClaimDue(ctx, "r3/1", at.Add(time.Minute), at, until, n)
	require.NoError(t, err)
	for _, x := range rest {
		byWhom[x.ID] = append(byWhom[x.ID], "r3")
	}
	require.Len(t, byWhom, n, "every schedule claimed")
	for id, who := range byWhom {
		assert.Len(t, who, 1, "%s claimed by %v", id, who)
	}
}

// savesAreExclusive has writers race to save one version, round after round: one of each
// race wins, the others are told of the conflict, and nothing they wrote is lost or mixed.
func savesAreExclusive(t *testing.T, s Store) {
	ctx := context.Background()
	create(t, s, due("x", at))
	const writers = 8
	for round := range 3 {
		base, err := s.FindSchedule(ctx, "ops", "x")
		require.NoError(t, err)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for i := range writers {
			mine := *base
			mine.Description = fmt.Sprintf("round %d writer %d", round, i)
			wg.Go(func() { errs[i] = s.SaveSchedule(ctx, &mine) })
		}
		wg.Wait()
		won := slices.IndexFunc(errs, func(err error) bool { return err == nil })
		require.GreaterOrEqual(t, won, 0, "one save wins")
		for i, err := range errs {
			if i != won {
				assert.ErrorIs(t, err, domain.ErrConflict, "writer %d", i)
			}
		}
		back, err := s.FindSchedule(ctx, "ops", "x")
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("round %d writer %d", round, won), back.Description)
		assert.Equal(t, base.Version+1, back.Version)
	}
}

func nothingToDo(t *testing.T, s Store) {
	ctx := context.Background()
	paused := due("paused", at)
	paused.Status = domain.StatusInactive
	archived := due("archived", at)
	archived.Status = domain.StatusArchived
	off := due("off", at)
	off.TriggerDisabled = true
	done := due("done", time.Time{})
	done.Type, done.Status, done.Cron, done.Date = domain.TypeRunOnce, domain.StatusCompleted, "", at.Add(-time.Hour)
	create(t, s, paused, archived, off, done, due("on", at))
	got, err := s.ClaimDue(ctx, "r1/1", at.Add(time.Hour), at, at.Add(2*time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"on"}, ids(got))

	// Paused by a save, due again once resumed.
	got[0].Status = domain.StatusInactive
	require.NoError(t, s.SaveSchedule(ctx, got[0]))
	none, err := s.ClaimDue(ctx, "r1/2", at.Add(time.Hour), at, at.Add(2*time.Hour), 10)
	require.NoError(t, err)
	assert.Empty(t, none, "paused")
	got[0].Status = domain.StatusActive
	require.NoError(t, s.SaveSchedule(ctx, got[0]))
	back, err := s.ClaimDue(ctx, "r1/3", at.Add(time.Hour), at, at.Add(2*time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"on"}, ids(back), "resumed")
}

func nudgeBuffered(t *testing.T, s Store) {
	ctx := context.Background()
	waits := due("waits", at.Add(time.Hour))
	waits.Overlap, waits.LastRun, waits.Buffered, waits.Recheck = domain.OverlapBufferOne, "r1", at, at.Add(30*time.Second)
	plain := due("plain", at.Add(time.Hour))
	plain.LastRun = "r1"
	create(t, s, waits, plain)
	for _, tt := range []struct {
		id, run string
		want    bool
	}{{"waits", "r0", false}, {"plain", "r1", false}, {"nope", "r1", false}, {"waits", "r1", true}} {
		nudged, err := s.NudgeBuffered(ctx, tt.id, tt.run, at.Add(time.Second))
		require.NoError(t, err)
		assert.Equal(t, tt.want, nudged, "%s after %s", tt.id, tt.run)
	}
	got, err := s.ClaimDue(ctx, "r1/1", at.Add(2*time.Second), at.Add(time.Second), at.Add(time.Minute), 10)
	require.NoError(t, err)
	require.Equal(t, []string{"waits"}, ids(got), "due at once")
	assert.True(t, got[0].Recheck.Equal(at.Add(time.Second)), "recheck %s", got[0].Recheck)
	assert.Equal(t, at, got[0].Buffered, "the fire still buffered")
	assert.True(t, got[0].Due().Equal(at.Add(time.Second)), "due %s", got[0].Due())
}

func keepsSideBySide(t *testing.T, s Store) {
	ctx := context.Background()
	const n = 30
	for i := range n {
		create(t, s, due(fmt.Sprintf("s%02d", i), at.Add(time.Second)))
	}
	got, err := s.ClaimDue(ctx, "r1/1", at.Add(2*time.Second), at, at.Add(20*time.Second), n)
	require.NoError(t, err)
	require.Len(t, got, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, x := range got {
		x.Last, x.Next, x.LastRun = at.Add(time.Second), at.Add(time.Hour), "run-"+x.ID
		wg.Go(func() { errs[i] = s.Keep(ctx, x, "r1/1", time.Time{}) })
	}
	wg.Wait()
	for i, x := range got {
		require.NoError(t, errs[i], x.ID)
		back, err := s.FindSchedule(ctx, "ops", x.ID)
		require.NoError(t, err)
		assert.Equal(t, x, back)
	}
}

func writeNotMade(t *testing.T, s Store) {
	ctx := context.Background()
	horizon, until := at.Add(2*time.Second), at.Add(20*time.Second)
	create(t, s, due("x", at.Add(time.Second)))
	got, err := s.ClaimDue(ctx, "r1/1", horizon, at, until, 10)
	require.NoError(t, err)
	require.Len(t, got, 1)

	gone, cancel := context.WithCancel(ctx)
	cancel()
	moved := *got[0]
	moved.Next = at.Add(time.Hour)
	require.Error(t, s.Keep(gone, &moved, "r1/1", time.Time{}))

	back, err := s.FindSchedule(ctx, "ops", "x")
	require.NoError(t, err)
	assert.True(t, back.Next.Equal(at.Add(time.Second)), "not written: next %s", back.Next)
	back.Description = "saved on the version read"
	require.NoError(t, s.SaveSchedule(ctx, back))
	again, err := s.ClaimDue(ctx, "r1/2", horizon, at, until, 10)
	require.NoError(t, err)
	require.Len(t, again, 1, "still due")
	assert.Equal(t, "saved on the version read", again[0].Description)
	require.NoError(t, s.Keep(ctx, again[0], "r1/2", time.Time{}))
}

func deleteTeam(t *testing.T, s Store) {
	ctx := context.Background()
	mine := due("a", at)
	create(t, s, mine, newSchedule("b", "ops", "deploy", domain.TypeCron, domain.StatusArchived, at))
	theirs := newSchedule("c", "other", "build", domain.TypeCron, domain.StatusActive, at)
	theirs.Next = at
	create(t, s, theirs)
	claimed, err := s.ClaimDue(ctx, "r1/1", at.Add(time.Second), at, at.Add(time.Minute), 1)
	require.NoError(t, err)
	require.Len(t, claimed, 1)

	require.NoError(t, s.DeleteTeamSchedules(ctx, "ops"))
	list, total, err := s.FindSchedules(ctx, app.Filter{Team: "ops"}, page.Request{Size: 10})
	require.NoError(t, err)
	assert.Empty(t, list)
	assert.Zero(t, total)
	wf, err := s.FindWorkflowSchedules(ctx, "ops", "build")
	require.NoError(t, err)
	assert.Empty(t, wf)
	_, err = s.FindSchedule(ctx, "ops", "a")
	assert.True(t, apperr.HasReason(err, apperr.ScheduleNotFound), "%v", err)
	nudged, err := s.NudgeBuffered(ctx, "a", "r1", at)
	require.NoError(t, err)
	assert.False(t, nudged)
	if claimed[0].ID == "a" {
		assert.ErrorIs(t, s.Keep(ctx, claimed[0], "r1/1", time.Time{}), domain.ErrConflict, "a claim of a deleted schedule stores nothing")
	}
	left, err := s.ClaimDue(ctx, "r2/1", at.Add(time.Hour), at.Add(2*time.Minute), at.Add(time.Hour), 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, ids(left), "another team's stay, and are still due")
	require.NoError(t, s.DeleteTeamSchedules(ctx, "nobody"), "a team with none")
}

// sealedAtRest checks that a schedule's params, which may hold the workflow's passwords,
// are nowhere in clear in what the store keeps, through every write, and read back opened.
func sealedAtRest(t *testing.T, h Harness) {
	ctx := context.Background()
	s := h.New(t)
	const created, saved, kept = "cr3ated-hunter2", "s4ved-hunter2", "k3pt-hunter2"
	x := due("x", at)
	x.Params, x.Secret = map[string]any{"token": created, "note": "shown"}, []string{"token"}
	create(t, s, x)
	x.Params["token"] = saved
	require.NoError(t, s.SaveSchedule(ctx, x))
	got, err := s.ClaimDue(ctx, "r1/1", at.Add(time.Second), at, at.Add(time.Minute), 10)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, saved, got[0].Params["token"], "claimed opened")
	got[0].Params["token"] = kept
	require.NoError(t, s.Keep(ctx, got[0], "r1/1", time.Time{}))

	raw := string(h.AtRest(t, s))
	require.Contains(t, raw, "n-x", "what the store keeps was read")
	for _, secret := range []string{created, saved, kept} {
		assert.NotContains(t, raw, secret, "held in clear")
		assert.NotContains(t, raw, "shown", "params are sealed whole: even the plain ones")
	}
	back, err := s.FindSchedule(ctx, "ops", "x")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"token": kept, "note": "shown"}, back.Params, "read back opened")
}
