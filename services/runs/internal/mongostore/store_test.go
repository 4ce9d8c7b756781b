package mongostore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newStore(t *testing.T) *mongostore.Store {
	t.Helper()
	s, _ := newStoreDB(t)
	return s
}

// newStoreDB is newStore with the database under it.
func newStoreDB(t testing.TB) (*mongostore.Store, *mongo.Database) {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	db := client.Database(testkit.Database(t))
	s := mongostore.New(db, box)
	require.NoError(t, s.EnsureIndexes(context.Background()))
	return s, db
}

// Whatever a run holds from a secret is stored sealed, in every collection, and read back
// opened.
func TestSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	const (
		global, team, param, result, decision = "gl0bal-pw", "t3am-pw", "par4m-pw", "resu1t-pw", "dec1sion-pw"
		// A catalogue task's password parameters: one with a default, one given a
		// literal by the workflow.
		catalogue, literal = "cata1ogue-pw", "l1teral-pw"
	)
	spec := &domain.Spec{Script: "deploy", Params: []domain.Param{
		// Labels as a read gives them back: the name, when none was given.
		{Name: "key", Label: "key", Type: "password", Default: json.RawMessage(`"` + catalogue + `"`)},
		{Name: "token", Label: "token", Type: "password"},
		{Name: "region", Label: "region", Type: "text", Default: json.RawMessage(`"shown"`)}}}
	deploy := domain.TaskDef{Name: "deploy", Type: "template", TaskRef: "deploy", Spec: spec,
		Params:       []domain.TaskParam{{Name: "token", Value: json.RawMessage(`"` + literal + `"`)}},
		Dependencies: []domain.Dependency{{TaskRef: "start"}}}
	def := &domain.Definition{Name: "w",
		Params: []domain.Param{{Name: "pw", Type: "password", Default: json.RawMessage(`"` + param + `"`)}},
		Tasks: []domain.TaskDef{{Name: "start", Type: "start"}, {Name: "d", Type: "decision"}, deploy,
			{Name: "end", Type: "end", Dependencies: []domain.Dependency{{TaskRef: "d"}, {TaskRef: "deploy"}}}}}
	r, tasks, err := domain.NewRun("run-sealed", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, time.Now(), domain.Limits{MaxDuration: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"pw"}, r.SecretParams)
	r.Owner = "replica-a"
	r.Context = domain.RunContext{Global: map[string]any{"g": global, "plain": "shown"}, Team: map[string]any{"t": team},
		SecretNames: []string{"global.g", "team.t"}, Secrets: []string{global, team, param}}
	r.Results, r.SecretResults = map[string]any{"out": result}, []string{"out"}
	d := tasks[1]
	d.Params, d.SecretParams = map[string]any{"value": decision, "plain": "shown"}, []string{"value"}
	d.Decision = decision
	d.Results, d.SecretResults = map[string]string{"r": result, "plain": "shown"}, []string{"r"}
	require.NoError(t, s.CreateRun(ctx, r, tasks))

	stored, unpacked := storedText(t, db)
	require.Contains(t, stored, "shown", "the documents were read")
	require.Positive(t, unpacked, "the task runs were read")
	for _, secret := range []string{global, team, param, result, decision, catalogue, literal} {
		assert.NotContains(t, stored, secret)
	}

	back, err := s.FindRun(ctx, r.ID)
	require.NoError(t, err)
	back.Definition, err = s.FindDefinition(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, r.Context, back.Context)
	assert.Equal(t, r.Params, back.Params)
	assert.Equal(t, r.Results, back.Results)
	assert.Nil(t, back.Definition.Params[0].Default, "a password default is not kept in the definition")
	assert.Equal(t, deploy, back.Definition.Tasks[2], "a catalogue task's secrets are kept sealed and read back opened")
	assert.Equal(t, catalogue, string(r.Definition.Tasks[2].Spec.Params[0].Default[1:len(catalogue)+1]), "the run's own copy is left as it was")
	all, err := s.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, d.Params, all[1].Params)
	assert.Equal(t, d.Results, all[1].Results)
	assert.Equal(t, decision, all[1].Decision)
}

// Pages written before task runs were packed are read as they are, and packed when next
// written.
func TestPagesWrittenUnpackedAreRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	def := &domain.Definition{Name: "w", Tasks: []domain.TaskDef{{Name: "start", Type: "start"},
		{Name: "end", Type: "end", Dependencies: []domain.Dependency{{TaskRef: "start"}}}}}
	r, tasks, err := domain.NewRun("run-unpacked", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, time.Now(), domain.Limits{MaxDuration: 5})
	require.NoError(t, err)
	r.Owner = "replica-a"
	tasks[0].Params = map[string]any{"p": "v"}
	require.NoError(t, s.CreateRun(ctx, r, tasks))
	want, err := s.FindTaskRuns(ctx, r)
	require.NoError(t, err)

	names, err := db.ListCollectionNames(ctx, bson.M{})
	require.NoError(t, err)
	rewritten := 0
	for _, name := range names {
		var page struct {
			RunID   string      `bson:"runId"`
			Version int64       `bson:"version"`
			Packed  bson.Binary `bson:"packed"`
		}
		coll := db.Collection(name)
		if coll.FindOne(ctx, bson.M{"_id": r.ID + "/0"}).Decode(&page) != nil || page.Packed.Data == nil {
			continue
		}
		raw, err := mongostore.Unpacked(page.Packed)
		require.NoError(t, err)
		_, err = coll.ReplaceOne(ctx, bson.M{"_id": r.ID + "/0"},
			bson.D{{Key: "runId", Value: page.RunID}, {Key: "version", Value: page.Version}, {Key: "tasks", Value: raw.Lookup("t")}})
		require.NoError(t, err)
		rewritten++
	}
	require.Equal(t, 1, rewritten, "the run's page was found")

	got, err := s.FindTaskRuns(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	one, err := s.FindTaskRun(ctx, tasks[0].ID)
	require.NoError(t, err)
	assert.Equal(t, want[0], one)

	got[1].Status = domain.Status("running")
	require.NoError(t, s.SaveTasks(ctx, r, got, []int{1}))
	again, err := s.FindTaskRuns(ctx, r)
	require.NoError(t, err)
	assert.Equal(t, got, again, "a page is written again packed")
}

func TestSlotsAreASet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	steps := []struct {
		op   string
		run  string
		want bool
	}{
		{"acquire", "a", true},
		{"acquire", "a", true}, // held already
		{"acquire", "b", true},
		{"acquire", "c", false},
		{"release", "a", true},
		{"release", "a", true}, // twice is harmless
		{"acquire", "c", true},
		{"acquire", "d", false},
	}
	for _, st := range steps {
		if st.op == "release" {
			require.NoError(t, s.ReleaseSlot(ctx, "t", st.run))
			continue
		}
		got, err := s.AcquireSlot(ctx, "t", st.run, 2)
		require.NoError(t, err)
		assert.Equal(t, st.want, got, "%s %s", st.op, st.run)
	}
	u, err := s.Usage(ctx, "t", "2026-11")
	require.NoError(t, err)
	assert.Equal(t, 2, u.Concurrent)
}

// A call cut short between counting a slot and joining (or leaving) the set is finished by
// the next call for the same run: the slot is neither counted twice nor lost.
func TestSlotsCutShortAreFinished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name string
		// n is the count and pending the entries as the call cut short left them; inSet
		// says whether the run had joined the set.
		n       int
		pending string
		inSet   bool
		op      string
		wantOK  bool
		wantN   int
		wantSet bool
	}{
		{"acquire counted, set not joined, acquired again", 1, "acquire", false, "acquire", true, 1, true},
		{"acquire counted, set not joined, released", 1, "acquire", false, "release", true, 0, false},
		{"acquire counted, set joined, acquired again", 1, "acquire", true, "acquire", true, 1, true},
		{"release uncounted, set not left, released again", 0, "release", true, "release", true, 0, false},
		{"release uncounted, set not left, acquired at the limit", 1, "release", true, "acquire", false, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, db := newStoreDB(t)
			_, err := db.Collection("counters").InsertOne(ctx, bson.M{"_id": "slots/t", "n": tt.n, "pending": bson.M{"r": tt.pending}})
			require.NoError(t, err)
			if tt.inSet {
				_, err = db.Collection("slots").InsertOne(ctx, bson.M{"_id": "t/r", "team": "t"})
				require.NoError(t, err)
			}
			if tt.op == "acquire" {
				ok, err := s.AcquireSlot(ctx, "t", "r", 1)
				require.NoError(t, err)
				assert.Equal(t, tt.wantOK, ok)
			} else {
				require.NoError(t, s.ReleaseSlot(ctx, "t", "r"))
			}
			n, err := s.SlotsTaken(ctx, "t")
			require.NoError(t, err)
			assert.Equal(t, tt.wantN, n)
			in, err := db.Collection("slots").CountDocuments(ctx, bson.M{"_id": "t/r"})
			require.NoError(t, err)
			assert.Equal(t, tt.wantSet, in == 1)
			var c bson.M
			require.NoError(t, db.Collection("counters").FindOne(ctx, bson.M{"_id": "slots/t"}).Decode(&c))
			assert.Empty(t, c["pending"], "nothing left pending")
		})
	}
}

// The sets that older versions kept in the counter documents move to the slots collection.
func TestSlotSetsMoveOutOfTheCounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	_, err := db.Collection("counters").InsertOne(ctx, bson.M{"_id": "slots/t", "n": 2, "runs": bson.A{"a", "b"}})
	require.NoError(t, err)
	require.NoError(t, s.EnsureIndexes(ctx))
	require.NoError(t, s.ReleaseSlot(ctx, "t", "a"))
	n, err := s.SlotsTaken(ctx, "t")
	require.NoError(t, err)
	assert.Equal(t, 1, n, "a held slot moved is released")
	ok, err := s.AcquireSlot(ctx, "t", "b", 1)
	require.NoError(t, err)
	assert.True(t, ok, "b still holds its slot")
	ok, err = s.AcquireSlot(ctx, "t", "c", 1)
	require.NoError(t, err)
	assert.False(t, ok)
}

func TestMonthlyCountAndKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for i, want := range []bool{true, true, false} {
		ok, err := s.CountMonthly(ctx, "t", "2026-11", fmt.Sprintf("r%d", i), 2)
		require.NoError(t, err)
		assert.Equal(t, want, ok, "run %d", i)
	}
	now := time.Now()
	held, err := s.HoldKey(ctx, "k", "r1", now)
	require.NoError(t, err)
	assert.Equal(t, "r1", held)
	held, err = s.HoldKey(ctx, "k", "r2", now)
	require.NoError(t, err)
	assert.Equal(t, "r1", held)
	held, err = s.HoldKey(ctx, "k", "r3", now.Add(mongostore.KeyTTL+time.Minute))
	require.NoError(t, err)
	assert.Equal(t, "r3", held, "an expired key names the new run")
}

func TestSaveStepIsConditionalAndArchiveMovesTheRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	def := &domain.Definition{Name: "w", Tasks: []domain.TaskDef{{Name: "start", Type: "start"}}}
	for i := range 70 {
		def.Tasks = append(def.Tasks, domain.TaskDef{Name: fmt.Sprintf("t%d", i), Type: "setwfproperty", Dependencies: []domain.Dependency{{TaskRef: "start"}}})
	}
	def.Tasks = append(def.Tasks, domain.TaskDef{Name: "end", Type: "end", Dependencies: []domain.Dependency{{TaskRef: "t0"}}})
	r, tasks, err := domain.NewRun("run-1", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, time.Now(), domain.Limits{MaxDuration: 5})
	require.NoError(t, err)
	r.Owner = "replica-a"
	require.NoError(t, s.CreateRun(ctx, r, tasks))

	stale, err := s.FindTaskRuns(ctx, r)
	require.NoError(t, err)
	staleRun := *r
	tasks[65].Status = domain.Ready
	require.NoError(t, s.SaveStep(ctx, r, tasks, []int{65}))
	assert.EqualValues(t, 2, tasks[65].Version)
	assert.EqualValues(t, 2, r.Version)
	assert.EqualValues(t, 1, tasks[0].Version, "only the changed page moves")

	stale[65].Status = domain.Running
	assert.ErrorIs(t, s.SaveStep(ctx, &staleRun, stale, []int{65}), domain.ErrConflict, "a stale page must not be written")
	stale[1].Status = domain.Running
	assert.ErrorIs(t, s.SaveStep(ctx, &staleRun, stale, []int{1}), domain.ErrConflict, "a stale run must not be written")
	got, err := s.FindTaskRun(ctx, tasks[65].ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Ready, got.Status)
	got, err = s.FindTaskRun(ctx, tasks[1].ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Running, got.Status, "a page no one else moved keeps the facts of a step that lost the run")

	stored, err := s.FindTaskRun(ctx, tasks[65].ID)
	require.NoError(t, err)
	assert.False(t, stored.RunsAttempt(0, ""), "a heartbeat for a task run that is not running")
	tasks[66].Status, tasks[66].Attempt, tasks[66].Runner = domain.Running, 2, "r1"
	require.NoError(t, s.SaveStep(ctx, r, tasks, []int{66}))
	beat := time.Now().UTC().Truncate(time.Millisecond)
	stored, err = s.FindTaskRun(ctx, tasks[66].ID)
	require.NoError(t, err)
	assert.True(t, stored.RunsAttempt(2, "r1"), "the running attempt's heartbeat")
	require.NoError(t, s.SaveHeartbeat(ctx, tasks[66].ID, domain.Heartbeat{Attempt: 2, Runner: "r1", At: beat}))
	last, found, err := s.LastHeartbeat(ctx, tasks[66].ID)
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, domain.Heartbeat{Attempt: 2, Runner: "r1", At: beat}, domain.Heartbeat{Attempt: last.Attempt, Runner: last.Runner, At: last.At.UTC()})
	assert.False(t, stored.RunsAttempt(1, "r1"), "an earlier attempt's heartbeat")
	_, found, err = s.LastHeartbeat(ctx, tasks[65].ID)
	require.NoError(t, err)
	assert.False(t, found)

	active, err := s.ListInFlight(ctx, domain.InFlightFilter{})
	require.NoError(t, err)
	require.Len(t, active, 1)
	assert.Equal(t, "replica-a", active[0].Owner)

	r.Status, r.Phase = domain.Succeeded, domain.Completed
	require.NoError(t, s.Archive(ctx, r, tasks))
	require.NoError(t, s.Archive(ctx, r, tasks), "archiving again is harmless")
	active, err = s.ListInFlight(ctx, domain.InFlightFilter{})
	require.NoError(t, err)
	assert.Empty(t, active)
	back, err := s.FindRun(ctx, r.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.Succeeded, back.Status)
	assert.Empty(t, back.Owner)
	all, err := s.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Len(t, all, 72)
	assert.Equal(t, domain.Ready, all[65].Status)
	done, err := s.FinalizeArchived(ctx, r.ID)
	require.NoError(t, err)
	assert.True(t, done)
}

// Runs created at once share their writes, and each still gets its own answer: a run
// created twice conflicts, and every created run is whole.
func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	def := &domain.Definition{Name: "w", Tasks: []domain.TaskDef{{Name: "start", Type: "start"},
		{Name: "end", Type: "end", Dependencies: []domain.Dependency{{TaskRef: "start"}}}}}
	const n = 60
	errs := make([]error, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			// Each run twice, half of them live and half ended within their first step.
			r, tasks, err := domain.NewRun(fmt.Sprintf("run-%d", i%n), def, domain.SubmitRequest{}, "manual", domain.Initiator{},
				time.Now(), domain.Limits{MaxDuration: 5})
			if err != nil {
				errs[i] = err
				return
			}
			r.Owner = "replica-a"
			if i%n%2 == 1 {
				r.Status, r.Phase = domain.Succeeded, domain.Completed
			}
			errs[i] = s.CreateRun(ctx, r, tasks)
		})
	}
	wg.Wait()
	for i := range n {
		a, b := errs[i], errs[i+n]
		require.True(t, a == nil || b == nil, "run-%d created: %v / %v", i, a, b)
		conflict := a
		if a == nil {
			conflict = b
		}
		assert.ErrorIs(t, conflict, domain.ErrConflict, "run-%d created twice", i)
		r, err := s.FindRun(ctx, fmt.Sprintf("run-%d", i))
		require.NoError(t, err)
		tasks, err := s.FindTaskRuns(ctx, r)
		require.NoError(t, err)
		assert.Len(t, tasks, 2)
		assert.Equal(t, i%2 == 0, r.Owner != "", "run-%d live or archived", i)
	}
}

// Runs counted at once never take a month past its limit.
func TestConcurrentMonthlyCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	var wg sync.WaitGroup
	var counted atomic.Int64
	for i := range 50 {
		wg.Go(func() {
			ok, err := s.CountMonthly(ctx, "t", "2026-12", fmt.Sprintf("r%d", i), 30)
			assert.NoError(t, err)
			if ok {
				counted.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 30, counted.Load())
	u, err := s.Usage(ctx, "t", "2026-12")
	require.NoError(t, err)
	assert.Equal(t, 30, u.Monthly)
}

// TestSearchesCountARunBeingPutAwayOnce: a run caught between its archive insert and its
// removal from the live collection, whatever phase its live copy was read in, is listed and
// counted once by the run search and the run count.
func TestSearchesCountARunBeingPutAwayOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
	other := &domain.Run{ID: "staying", Team: "infra", Workflow: "w", Status: domain.Running, Phase: domain.PhaseRunning,
		CreationDate: start.Add(-time.Second), StartTime: start, Owner: "replica-a"}
	require.NoError(t, s.CreateRun(ctx, other, nil))
	live := &domain.Run{ID: "moving", Team: "infra", Workflow: "w", Status: domain.Running, Phase: domain.PhaseRunning,
		CreationDate: start, StartTime: start, Owner: "replica-a"}
	require.NoError(t, s.CreateRun(ctx, live, nil))
	archived := *live
	archived.Status, archived.Phase, archived.EndTime = domain.Succeeded, domain.Completed, start.Add(time.Second)
	require.NoError(t, s.CreateRun(ctx, &archived, nil))

	for _, desc := range []bool{false, true} {
		runs, total, err := s.FindRuns(ctx, domain.RunFilter{Team: "infra"}, page.Request{Size: 10, Desc: desc})
		require.NoError(t, err)
		assert.EqualValues(t, 2, total)
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		want := []string{"staying", "moving"}
		if desc {
			slices.Reverse(want)
		}
		assert.Equal(t, want, ids)
	}
	counts, err := s.CountRuns(ctx, domain.RunFilter{Team: "infra"})
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"running": 2}, counts)
}
