// Package storetest is the contract every store of the workflows service keeps, run
// against each implementation (mongostore on a MongoDB-wire server, sqlitestore on a
// SQLite file): catalogs and their conditional changes, revisions, templates, a team's
// deletion, the teams and their workflow counters, and what is sealed at rest.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Stores are one implementation's stores over one fresh database.
type Stores struct {
	Definitions app.DefinitionStore
	Teams       app.TeamStore
	Counter     app.QuotaCounter
	// Other is a second DefinitionStore over the same database, as another replica's
	// (or, for a store of one process, another handle's) with its own memory.
	Other app.DefinitionStore
	// Run runs the store's background work (the collector of revisions) until ctx ends.
	Run func(ctx context.Context) error
	// AtRest returns everything stored, as bytes a reader of the database could see, for
	// the checks that secrets are sealed.
	AtRest func(t *testing.T) string
}

// Run runs the contract against the stores newStores makes, one fresh database per test.
func Run(t *testing.T, newStores func(t *testing.T) Stores) {
	tests := map[string]func(t *testing.T, s Stores){
		"an empty namespace has an empty catalog":   testEmpty,
		"a change is read back whole":               testChangeReadBack,
		"concurrent changes lose nothing":           testConcurrentChanges,
		"a stale catalog's change is made again":    testStaleChange,
		"a failing change stores nothing":           testFailingChange,
		"revisions and their loads":                 testRevisions,
		"a taken revision number moves on":          testRevisionProbe,
		"a collected revision is gone":              testCollect,
		"templates are a namespace of their own":    testTemplates,
		"a team's deletion removes its incarnation": testDeleteNamespace,
		"teams by name and incarnation":             testTeams,
		"racing reservations never pass the limit":  testReserve,
		"secrets are sealed at rest":                testSealed,
	}
	for name, test := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStores(t)
			if s.Run != nil {
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { defer close(done); _ = s.Run(ctx) }()
				t.Cleanup(func() { cancel(); <-done })
			}
			test(t, s)
		})
	}
}

var infra = domain.Namespace{Team: "infra", TeamID: "id-infra"}

func at(ms int64) time.Time { return time.UnixMilli(1_700_000_000_000 + ms).UTC() }

func entry(name string, latest int, created time.Time) domain.Entry {
	return domain.Entry{Name: name, Latest: latest, Status: domain.Status("active"), CreationDate: created}
}

// put changes ns by putting e, owing one event.
func put(t *testing.T, store app.DefinitionStore, ns domain.Namespace, e domain.Entry) *domain.Catalog {
	t.Helper()
	c, err := store.UpdateCatalog(context.Background(), ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
		next.Put(e)
		return []outbox.Entry{{ID: fmt.Sprintf("%s-%d", e.Name, next.Seq), Topic: "workflow-events", Key: e.Name, Event: []byte(`{}`)}}, nil
	})
	require.NoError(t, err)
	return c
}

func testEmpty(t *testing.T, s Stores) {
	c, err := s.Definitions.Catalog(context.Background(), infra)
	require.NoError(t, err)
	assert.Equal(t, int64(0), c.Seq)
	assert.Equal(t, 0, c.Len())
}

func testChangeReadBack(t *testing.T, s Stores) {
	ctx := context.Background()
	e := entry("deploy", 3, at(5))
	e.Labels = map[string]string{"env": "prod", "tier": "1"}
	e = e.WithRev(2, 4)
	put(t, s.Definitions, infra, e)
	put(t, s.Definitions, infra, entry("build", 1, at(1)))
	disabled := entry("old", 2, at(9))
	disabled.Status = domain.Status("disabled")
	put(t, s.Definitions, infra, disabled)
	c, err := s.Definitions.UpdateCatalog(ctx, infra, func(next *domain.Catalog) ([]outbox.Entry, error) {
		next.Remove("old")
		return nil, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(4), c.Seq)

	// Read by another handle, from the database.
	for name, store := range map[string]app.DefinitionStore{"writer": s.Definitions, "other": s.Other} {
		got, err := store.Catalog(ctx, infra)
		require.NoError(t, err, name)
		assert.Equal(t, int64(4), got.Seq, name)
		require.Equal(t, 2, got.Len(), name)
		d, ok := got.Entry("deploy")
		require.True(t, ok, name)
		assert.Equal(t, 3, d.Latest, name)
		assert.Equal(t, 4, d.RevOf(2), name)
		assert.Equal(t, 1, d.RevOf(3), name)
		assert.Equal(t, e.Labels, d.Labels, name)
		assert.True(t, d.CreationDate.Equal(at(5)), name)
		_, ok = got.Entry("old")
		assert.False(t, ok, "removed: %s", name)
		// Oldest first; filters and pages over the catalog.
		names := func(es []domain.Entry) (out []string) {
			for _, e := range es {
				out = append(out, e.Name)
			}
			return out
		}
		assert.Equal(t, []string{"build", "deploy"}, names(got.Entries()), name)
		found, total := got.Find(domain.Filter{Labels: map[string]string{"env": "prod"}}, page.Request{Size: 10})
		assert.Equal(t, []string{"deploy"}, names(found), name)
		assert.Equal(t, int64(1), total, name)
	}

	other, err := s.Definitions.Catalog(ctx, domain.Namespace{Team: "other", TeamID: "id-other"})
	require.NoError(t, err)
	assert.Equal(t, 0, other.Len(), "namespaces are apart")
}

func testConcurrentChanges(t *testing.T, s Stores) {
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		store := s.Definitions
		if i%2 == 1 {
			store = s.Other
		}
		wg.Go(func() { put(t, store, infra, entry(fmt.Sprintf("w%02d", i), 1, at(int64(i)))) })
	}
	wg.Wait()
	c, err := s.Definitions.Catalog(context.Background(), infra)
	require.NoError(t, err)
	assert.Equal(t, int64(n), c.Seq, "one change each")
	assert.Equal(t, n, c.Len(), "none lost")
}

// Two saves of one workflow, each from the catalog it read: one wins, the other finds the
// head moved and is made again on the winner's catalog; neither is lost.
func testStaleChange(t *testing.T, s Stores) {
	ctx := context.Background()
	put(t, s.Definitions, infra, entry("deploy", 1, at(0)))
	_, err := s.Other.Catalog(ctx, infra) // the other handle holds seq 1
	require.NoError(t, err)

	var calls atomic.Int32
	release := make(chan struct{})
	var wg sync.WaitGroup
	bump := func(store app.DefinitionStore) {
		_, err := store.UpdateCatalog(ctx, infra, func(next *domain.Catalog) ([]outbox.Entry, error) {
			if calls.Add(1) <= 2 {
				<-release // both read the same catalog before either writes
			}
			e, ok := next.Entry("deploy")
			require.True(t, ok)
			e.Latest++
			next.Put(e)
			return nil, nil
		})
		assert.NoError(t, err)
	}
	wg.Go(func() { bump(s.Definitions) })
	wg.Go(func() { bump(s.Other) })
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 10*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	assert.Equal(t, int32(3), calls.Load(), "the loser ran again")
	for _, store := range []app.DefinitionStore{s.Definitions, s.Other} {
		c, err := store.Catalog(ctx, infra)
		require.NoError(t, err)
		e, _ := c.Entry("deploy")
		assert.Equal(t, 3, e.Latest, "both saves kept")
		assert.Equal(t, int64(3), c.Seq)
	}
}

func testFailingChange(t *testing.T, s Stores) {
	ctx := context.Background()
	put(t, s.Definitions, infra, entry("deploy", 1, at(0)))
	boom := apperr.New(apperr.WorkflowAlreadyExists, "no")
	_, err := s.Definitions.UpdateCatalog(ctx, infra, func(next *domain.Catalog) ([]outbox.Entry, error) {
		next.Put(entry("other", 1, at(1)))
		return nil, boom
	})
	require.ErrorIs(t, err, boom)
	c, err := s.Other.Catalog(ctx, infra)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c.Seq)
	assert.Equal(t, 1, c.Len())
}

func revision(name string, version, rev int, tasks ...domain.Task) domain.Revision {
	return domain.Revision{Name: name, Version: version, Rev: rev,
		Changelog: domain.Changelog{Author: "ada", Reason: fmt.Sprintf("v%d", version), Date: domain.NewTime(at(int64(version)))},
		Workflow: domain.Workflow{Name: name, Description: fmt.Sprintf("version %d", version), Labels: map[string]string{"env": "prod"},
			Tasks: tasks}}
}

func testRevisions(t *testing.T, s Stores) {
	ctx := context.Background()
	task := domain.Task{Name: "build", Type: "script", Params: []domain.TaskParam{{Name: "cmd", Value: json.RawMessage(`"make"`)}}}
	for v := 1; v <= 3; v++ {
		got, err := s.Definitions.InsertRevision(ctx, infra, revision("deploy", v, 1, task))
		require.NoError(t, err)
		assert.Equal(t, 1, got)
	}
	for _, store := range []app.DefinitionStore{s.Definitions, s.Other} {
		for v := 1; v <= 3; v++ {
			sum, err := store.FindRevision(ctx, infra, "deploy", v, 1, domain.LoadSummary)
			require.NoError(t, err)
			assert.Equal(t, fmt.Sprintf("version %d", v), sum.Workflow.Description)
			assert.Equal(t, "ada", sum.Changelog.Author)
			assert.Equal(t, fmt.Sprintf("v%d", v), sum.Changelog.Reason)
			require.NotNil(t, sum.Changelog.Date)
			assert.True(t, sum.Changelog.Date.Equal(at(int64(v))))
			assert.Nil(t, sum.Workflow.Tasks, "a summary leaves the tasks")
			assert.Empty(t, sum.Workflow.RawTasks)
		}
		full, err := store.FindRevision(ctx, infra, "deploy", 2, 1, domain.LoadTasks)
		require.NoError(t, err)
		require.Len(t, full.Workflow.Tasks, 1)
		assert.Equal(t, "build", full.Workflow.Tasks[0].Name)
		assert.JSONEq(t, `"make"`, string(full.Workflow.Tasks[0].Params[0].Value))
		raw, err := store.FindRevision(ctx, infra, "deploy", 2, 1, domain.LoadRawTasks)
		require.NoError(t, err)
		assert.Nil(t, raw.Workflow.Tasks)
		var tasks []map[string]any
		require.NoError(t, json.Unmarshal(raw.Workflow.RawTasks, &tasks))
		assert.Equal(t, "build", tasks[0]["name"])
	}
	for _, miss := range []struct {
		ns           domain.Namespace
		name         string
		version, rev int
	}{{infra, "deploy", 4, 1}, {infra, "deploy", 1, 2}, {infra, "nope", 1, 1}, {domain.Namespace{Team: "other", TeamID: "id-other"}, "deploy", 1, 1}} {
		_, err := s.Definitions.FindRevision(ctx, miss.ns, miss.name, miss.version, miss.rev, domain.LoadSummary)
		assert.True(t, apperr.HasReason(err, apperr.WorkflowRevisionNotFound), "%+v: %v", miss, err)
	}
}

func testRevisionProbe(t *testing.T, s Stores) {
	ctx := context.Background()
	got, err := s.Definitions.InsertRevision(ctx, infra, revision("deploy", 1, 1))
	require.NoError(t, err)
	require.Equal(t, 1, got)
	got, err = s.Other.InsertRevision(ctx, infra, revision("deploy", 1, 1))
	require.NoError(t, err)
	assert.Equal(t, 2, got, "1 was taken")
	got, err = s.Definitions.InsertRevision(ctx, infra, revision("deploy", 1, 5))
	require.NoError(t, err)
	assert.Equal(t, 5, got, "numbers start from the one asked")

	// Concurrent saves of one version each get their own number.
	var wg sync.WaitGroup
	revs := make([]int, 8)
	for i := range revs {
		wg.Go(func() {
			r, err := s.Definitions.InsertRevision(ctx, infra, revision("build", 1, 1))
			assert.NoError(t, err)
			revs[i] = r
		})
	}
	wg.Wait()
	seen := map[int]bool{}
	for _, r := range revs {
		assert.False(t, seen[r], "revision %d given twice: %v", r, revs)
		seen[r] = true
	}
}

func testCollect(t *testing.T, s Stores) {
	ctx := context.Background()
	for rev := 1; rev <= 2; rev++ {
		_, err := s.Definitions.InsertRevision(ctx, infra, revision("deploy", 1, rev))
		require.NoError(t, err)
	}
	_, err := s.Definitions.FindRevision(ctx, infra, "deploy", 1, 1, domain.LoadSummary)
	require.NoError(t, err)
	s.Definitions.CollectRevision(infra, "deploy", 1, 1)
	require.Eventually(t, func() bool {
		_, err := s.Definitions.FindRevision(ctx, infra, "deploy", 1, 1, domain.LoadSummary)
		return apperr.HasReason(err, apperr.WorkflowRevisionNotFound)
	}, 10*time.Second, 5*time.Millisecond)
	_, err = s.Definitions.FindRevision(ctx, infra, "deploy", 1, 2, domain.LoadSummary)
	assert.NoError(t, err, "the other revision stays")
}

func testTemplates(t *testing.T, s Stores) {
	ctx := context.Background()
	tpl := domain.Namespace{}
	put(t, s.Definitions, tpl, entry("deploy", 1, at(0)))
	_, err := s.Definitions.InsertRevision(ctx, tpl, revision("deploy", 1, 1))
	require.NoError(t, err)
	c, err := s.Other.Catalog(ctx, infra)
	require.NoError(t, err)
	assert.Equal(t, 0, c.Len(), "a team does not see the templates")
	_, err = s.Other.FindRevision(ctx, infra, "deploy", 1, 1, domain.LoadSummary)
	assert.True(t, apperr.HasReason(err, apperr.WorkflowRevisionNotFound))
	c, err = s.Other.Catalog(ctx, tpl)
	require.NoError(t, err)
	assert.Equal(t, 1, c.Len())
	_, err = s.Other.FindRevision(ctx, tpl, "deploy", 1, 1, domain.LoadSummary)
	assert.NoError(t, err)
	assert.Error(t, s.Definitions.DeleteNamespace(ctx, tpl), "the templates are not deleted as a whole")
}

func testDeleteNamespace(t *testing.T, s Stores) {
	ctx := context.Background()
	again := domain.Namespace{Team: "infra", TeamID: "id-infra-2"}
	other := domain.Namespace{Team: "other", TeamID: "id-other"}
	// A revision is read by the number its insertion answered: an incarnation of a team
	// may find the numbers of an earlier one taken.
	revs := map[domain.Namespace]int{}
	for _, ns := range []domain.Namespace{infra, again, other} {
		put(t, s.Definitions, ns, entry("deploy", 1, at(0)))
		rev, err := s.Definitions.InsertRevision(ctx, ns, revision("deploy", 1, 1))
		require.NoError(t, err)
		revs[ns] = rev
	}
	require.NoError(t, s.Definitions.DeleteNamespace(ctx, infra))
	for _, store := range []app.DefinitionStore{s.Definitions, s.Other} {
		c, err := store.Catalog(ctx, infra)
		require.NoError(t, err)
		assert.Equal(t, 0, c.Len())
		_, err = store.FindRevision(ctx, infra, "deploy", 1, revs[infra], domain.LoadSummary)
		assert.True(t, apperr.HasReason(err, apperr.WorkflowRevisionNotFound))
		for _, ns := range []domain.Namespace{again, other} {
			c, err := store.Catalog(ctx, ns)
			require.NoError(t, err)
			assert.Equal(t, 1, c.Len(), "%v stays", ns)
			_, err = store.FindRevision(ctx, ns, "deploy", 1, revs[ns], domain.LoadSummary)
			assert.NoError(t, err, "%v stays", ns)
		}
	}
	// The namespace starts again empty.
	c := put(t, s.Definitions, infra, entry("fresh", 1, at(0)))
	assert.Equal(t, int64(1), c.Seq)
	assert.Equal(t, 1, c.Len())
}

func testTeams(t *testing.T, s Stores) {
	ctx := context.Background()
	_, err := s.Teams.FindTeamByName(ctx, "infra")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	team := domain.Team{ID: "id-infra", Name: "infra", DisplayName: "Infra", CreationDate: at(3)}
	require.NoError(t, s.Teams.SaveTeam(ctx, team))
	require.NoError(t, s.Teams.SaveTeam(ctx, domain.Team{ID: "id-app", Name: "app", DisplayName: "App", CreationDate: at(4)}))
	got, err := s.Teams.FindTeamByName(ctx, "infra")
	require.NoError(t, err)
	assert.Equal(t, team.ID, got.ID)
	assert.Equal(t, "Infra", got.DisplayName)
	assert.True(t, got.CreationDate.Equal(at(3)))
	all, err := s.Teams.ListTeams(ctx)
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, []string{"app", "infra"}, []string{all[0].Name, all[1].Name}, "by name")

	// Saving again keeps the counter; a deletion of another incarnation does nothing.
	ok, err := s.Counter.ReserveWorkflow(ctx, team, 10)
	require.NoError(t, err)
	require.True(t, ok)
	team.DisplayName = "Infrastructure"
	require.NoError(t, s.Teams.SaveTeam(ctx, team))
	got, err = s.Teams.FindTeamByName(ctx, "infra")
	require.NoError(t, err)
	assert.Equal(t, "Infrastructure", got.DisplayName)
	ok, err = s.Counter.ReserveWorkflow(ctx, team, 1)
	require.NoError(t, err)
	assert.False(t, ok, "the counter was kept at 1")
	require.NoError(t, s.Teams.DeleteTeam(ctx, "infra", "id-elsewhere"))
	_, err = s.Teams.FindTeamByName(ctx, "infra")
	require.NoError(t, err, "only its incarnation deletes a team")
	require.NoError(t, s.Teams.DeleteTeam(ctx, "infra", "id-infra"))
	_, err = s.Teams.FindTeamByName(ctx, "infra")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound))
	_, err = s.Counter.ReserveWorkflow(ctx, team, 10)
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "a team gone: %v", err)
}

func testReserve(t *testing.T, s Stores) {
	ctx := context.Background()
	team := domain.Team{ID: "id-infra", Name: "infra", DisplayName: "Infra", CreationDate: at(0)}
	require.NoError(t, s.Teams.SaveTeam(ctx, team))
	const limit = 5
	var granted atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			ok, err := s.Counter.ReserveWorkflow(ctx, team, limit)
			assert.NoError(t, err)
			if ok {
				granted.Add(1)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(limit), granted.Load())
	// Releases never go below zero: after more releases than reservations, the limit's
	// worth of reservations is granted again, and no more.
	for range limit + 3 {
		require.NoError(t, s.Counter.ReleaseWorkflow(ctx, team))
	}
	for i := range limit + 1 {
		ok, err := s.Counter.ReserveWorkflow(ctx, team, limit)
		require.NoError(t, err)
		assert.Equal(t, i < limit, ok, "reservation %d", i)
	}
}

func testSealed(t *testing.T, s Stores) {
	ctx := context.Background()
	const pw, literal = "pa55word-default", "l1teral-secret"
	r := revision("deploy", 1, 1, domain.Task{Name: "call", Type: "script", Params: []domain.TaskParam{
		{Name: "token", Value: json.RawMessage(`"` + literal + `"`), Secret: true},
		{Name: "region", Value: json.RawMessage(`"eu-west"`)},
	}})
	r.Workflow.Params = []domain.Param{
		{Name: "key", Type: "password", Default: json.RawMessage(`"` + pw + `"`)},
		{Name: "zone", Type: "text", Default: json.RawMessage(`"shown-zone"`)},
	}
	_, err := s.Definitions.InsertRevision(ctx, infra, r)
	require.NoError(t, err)
	stored := s.AtRest(t)
	assert.NotContains(t, stored, pw)
	assert.NotContains(t, stored, literal)
	assert.Contains(t, stored, "enc:v1:", "sealed values are there")
	assert.True(t, strings.Contains(stored, "eu-west") && strings.Contains(stored, "shown-zone"), "what is no secret is stored as it is")

	got, err := s.Other.FindRevision(ctx, infra, "deploy", 1, 1, domain.LoadTasks)
	require.NoError(t, err)
	assert.JSONEq(t, `"`+pw+`"`, string(got.Workflow.Params[0].Default), "opened on reading")
	require.Len(t, got.Workflow.Tasks, 1)
	assert.JSONEq(t, `"`+literal+`"`, string(got.Workflow.Tasks[0].Params[0].Value))
	assert.True(t, got.Workflow.Tasks[0].Params[0].IsSecret(), "read back marked secret")
	raw, err := s.Other.FindRevision(ctx, infra, "deploy", 1, 1, domain.LoadRawTasks)
	require.NoError(t, err)
	assert.NotContains(t, string(raw.Workflow.RawTasks), literal, "raw tasks stay sealed, for rendering masked")
}
