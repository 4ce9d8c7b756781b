package mongostore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// openAction builds the open approval of task i of run.
func openAction(run string, i int) *domain.Action {
	task := domain.TaskRunID(run, i)
	return &domain.Action{ID: domain.ActionID(task, 1), Team: "infra", Type: domain.ApprovalAction, Status: domain.ActionSubmitted,
		Workflow: "build", RunID: run, TaskRunID: task, Attempt: 1, Required: 1, CreationDate: time.Now().UTC().Truncate(time.Millisecond)}
}

// dump is every document of every collection of db as extended JSON.
func dump(t *testing.T, db *mongo.Database) string {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.M{})
	require.NoError(t, err)
	var out strings.Builder
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(ctx, &docs))
		raw, err := bson.MarshalExtJSON(bson.M{"docs": docs}, false, false)
		require.NoError(t, err)
		out.Write(raw)
	}
	return out.String()
}

// A manual action's secret values and its form's password defaults are stored sealed,
// in the action and in the versions written of it, and read back opened.
func TestActionSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	const value, def = "s3cret-value", "d3fault-pw"
	a := openAction("run-1", 0)
	a.Type, a.SecretValues = domain.ManualAction, []string{"pw"}
	a.Form = []domain.Param{{Name: "pw", Label: "pw", Type: "password", Default: json.RawMessage(`"` + def + `"`)},
		{Name: "user", Label: "user", Type: "text", Default: json.RawMessage(`"shown"`)}}
	require.NoError(t, s.CreateAction(ctx, a))
	_, err := s.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
		x.Values = map[string]any{"pw": value, "user": "shown-too"}
		x.Status, x.DecidedAt = domain.ActionApproved, time.Now()
		return nil
	})
	require.NoError(t, err)

	stored := dump(t, db)
	require.Contains(t, stored, "shown-too", "the documents were read")
	require.Contains(t, stored, a.ID+"@1", "the versions written were read too")
	for _, secret := range []string{value, def} {
		assert.NotContains(t, stored, secret)
	}
	back, err := s.FindAction(ctx, a.ID)
	require.NoError(t, err)
	assert.Equal(t, value, back.Values["pw"])
	assert.JSONEq(t, `"`+def+`"`, string(back.Form[0].Default))
}

// abandon stores, as a writer that died between its two writes would leave it, the next
// version of action id with change applied: claimed at claimed, not landed.
func abandon(t *testing.T, db *mongo.Database, id string, claimed time.Time, change bson.M) {
	t.Helper()
	ctx := context.Background()
	var doc bson.M
	require.NoError(t, db.Collection("actions").FindOne(ctx, bson.M{"_id": id}).Decode(&doc))
	version := doc["version"].(int64) + 1
	for k, v := range change {
		doc[k] = v
	}
	doc["version"] = version
	_, err := db.Collection("unapplied").InsertOne(ctx, bson.M{"_id": id, "team": doc["team"]})
	require.NoError(t, err)
	_, err = db.Collection("actionwrites").InsertOne(ctx, bson.M{"_id": fmt.Sprintf("%s@%d", id, version), "team": doc["team"],
		"at": claimed, "action": doc})
	require.NoError(t, err)
}

// A version whose writer died before it landed is landed by whoever meets it once it is
// old enough, and not before: nothing a writer claimed is lost, nor overwritten.
func TestAbandonedActionVersionsLand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	decided := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	decision := bson.M{"status": "approved", "decidedAt": decided}

	t.Run("the reconciler's read lands a decision", func(t *testing.T) {
		a := openAction("run-1", 0)
		require.NoError(t, s.CreateAction(ctx, a))
		abandon(t, db, a.ID, time.Now().Add(-time.Minute), decision)
		got, err := s.FindUnapplied(ctx, time.Now())
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, domain.ActionApproved, got[0].Status)
		assert.True(t, got[0].DecidedAt.Equal(decided))
		back, err := s.FindAction(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, domain.ActionApproved, back.Status, "landed")
		assert.EqualValues(t, a.Version+1, back.Version)
	})
	t.Run("an update lands it and applies fn on top", func(t *testing.T) {
		a := openAction("run-1", 1)
		require.NoError(t, s.CreateAction(ctx, a))
		abandon(t, db, a.ID, time.Now().Add(-time.Minute), decision)
		calls := 0
		got, err := s.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
			calls++
			x.Applied = true
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, domain.ActionApproved, got.Status)
		assert.True(t, got.Applied)
		assert.EqualValues(t, a.Version+2, got.Version)
		unapplied, err := s.FindUnapplied(ctx, time.Now())
		require.NoError(t, err)
		assert.NotContains(t, actionIDs(unapplied), a.ID, "applied")
	})
	t.Run("a version still being written is waited for, not taken over", func(t *testing.T) {
		a := openAction("run-1", 2)
		require.NoError(t, s.CreateAction(ctx, a))
		abandon(t, db, a.ID, time.Now().Add(time.Hour), decision)
		_, err := s.UpdateAction(ctx, a.ID, func(x *domain.Action) error {
			x.Actioners = append(x.Actioners, domain.Actioner{ID: "late"})
			return nil
		})
		assert.ErrorIs(t, err, domain.ErrConflict)
		back, err := s.FindAction(ctx, a.ID)
		require.NoError(t, err)
		assert.Equal(t, a.Version, back.Version, "nothing written over the version in flight")
		assert.Empty(t, back.Actioners)
	})
}

func actionIDs(actions []*domain.Action) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = a.ID
	}
	return out
}

// BenchmarkActionsAmongManyOpen decides, reads and searches actions among 10,000 open
// approvals (and a few decisions not yet applied). A decision's cost must not grow with the open ones (a write on
// {_id, version} would read them all on the embedded FerretDB); a search's does there, as
// every query but one by _id scans.
//
//	go test ./internal/mongostore -run '^$' -bench ActionsAmongManyOpen -benchtime 2s
func BenchmarkActionsAmongManyOpen(b *testing.B) {
	ctx := context.Background()
	s, db := newStoreDB(b)
	const open = 10_000
	first := openAction("run-0", 0)
	require.NoError(b, s.CreateAction(ctx, first))
	var doc bson.M
	require.NoError(b, db.Collection("actions").FindOne(ctx, bson.M{"_id": first.ID}).Decode(&doc))
	ids := []string{first.ID}
	var batch []any
	for i := 1; i < open; i++ {
		a := openAction(fmt.Sprintf("run-%d", i), 0)
		d := bson.M{}
		for k, v := range doc {
			d[k] = v
		}
		d["_id"], d["runId"], d["taskRunId"] = a.ID, a.RunID, a.TaskRunID
		batch = append(batch, d)
		ids = append(ids, a.ID)
		if len(batch) == 50 || i == open-1 {
			_, err := db.Collection("actions").InsertMany(ctx, batch)
			require.NoError(b, err)
			batch = batch[:0]
		}
	}
	// Spread over the collection: a scan would meet about half of it each time.
	next := 0
	pick := func() string {
		next++
		return ids[(next*7919+open/2)%open]
	}
	update := func(b *testing.B, id string, fn func(*domain.Action) error) {
		if _, err := s.UpdateAction(ctx, id, fn); err != nil {
			b.Fatal(err)
		}
	}

	var decided []string
	b.Run("decide", func(b *testing.B) {
		for b.Loop() {
			id := pick()
			update(b, id, func(a *domain.Action) error {
				a.Actioners = append(a.Actioners, domain.Actioner{ID: "u", Approved: true, Date: time.Now()})
				a.Status, a.DecidedAt = domain.ActionApproved, time.Now()
				return nil
			})
			decided = append(decided, id)
		}
	})
	// The runs take the decisions but the last few.
	for _, id := range decided[:max(0, len(decided)-10)] {
		update(b, id, func(a *domain.Action) error {
			a.Applied = true
			return nil
		})
	}
	b.Run("decide and apply", func(b *testing.B) {
		for b.Loop() {
			id := pick()
			update(b, id, func(a *domain.Action) error {
				a.Status, a.DecidedAt = domain.ActionRejected, time.Now()
				return nil
			})
			update(b, id, func(a *domain.Action) error {
				a.Applied = true
				return nil
			})
		}
	})
	b.Run("find", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.FindAction(ctx, pick()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unapplied", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.FindUnapplied(ctx, time.Now()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("search", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.FindActions(ctx, domain.ActionFilter{Team: "infra", Statuses: []string{"submitted"}},
				domain.ActionSort{}, page.Request{Size: 10}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("count", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.CountActions(ctx, domain.ActionFilter{Team: "infra"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
