package workflows_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
)

const base = "/api/v2/team/infra/workflow"

// Create, read, version, replace, changelog and delete, with the events they publish.
func TestWorkflowLifecycle(t *testing.T) {
	t.Parallel()
	bothStores(t, testWorkflowLifecycle)
}

func testWorkflowLifecycle(t *testing.T, store string) {
	f := newFixture(t, fixtureOptions{store: store})

	body := chain("My Flow", 2)
	body["labels"] = map[string]any{"env": "prod"}
	body["designer"] = map[string]any{"zoom": 1.5} // unknown: kept and echoed
	body["changelog"] = map[string]any{"reason": "first cut"}
	created := f.must(t, http.StatusCreated, editor, http.MethodPost, base, body)
	w := created.body
	assert.Equal(t, "my-flow", w["name"])
	assert.Equal(t, "My Flow", w["displayName"])
	assert.Equal(t, "infra", w["team"])
	assert.Equal(t, "active", w["status"])
	assert.EqualValues(t, 1, w["version"])
	assert.Equal(t, base+"/my-flow", created.header.Get("Location"))
	assert.Equal(t, map[string]any{"zoom": 1.5}, w["designer"])
	assert.Equal(t, map[string]any{"author": "Eddie Editor", "reason": "first cut", "date": w["changelog"].(map[string]any)["date"]}, w["changelog"])
	_, err := time.Parse(time.RFC3339, w["creationDate"].(string))
	require.NoError(t, err)
	// The manual trigger is on by default, and every taskRef is pinned to the version
	// resolved at save.
	assert.Equal(t, map[string]any{"enabled": true, "conditions": []any{}}, w["triggers"].(map[string]any)["manual"])
	tasks := w["tasks"].([]any)
	assert.EqualValues(t, 2, tasks[1].(map[string]any)["taskVersion"])

	res := f.must(t, http.StatusConflict, editor, http.MethodPost, base, chain("my_flow", 1))
	assert.Equal(t, "WORKFLOW_ALREADY_EXISTS", res.body["reason"])

	// PUT adds version 2; PUT ?replace=true overwrites it in place.
	v2 := chain("my-flow", 3)
	v2["changelog"] = map[string]any{"reason": "third step"}
	got := f.must(t, http.StatusOK, owner, http.MethodPut, base, v2).body
	assert.EqualValues(t, 2, got["version"])
	assert.Len(t, got["tasks"], 5)
	v2r := chain("my-flow", 1)
	v2r["status"] = "inactive"
	v2r["changelog"] = map[string]any{"reason": "back to one"}
	got = f.must(t, http.StatusOK, owner, http.MethodPut, base+"?replace=true", v2r).body
	assert.EqualValues(t, 2, got["version"])
	assert.Equal(t, "inactive", got["status"])
	assert.Equal(t, w["creationDate"], got["creationDate"], "the workflow's creation date stays")

	tests := []struct {
		name      string
		query     string
		wantCode  int
		wantVer   float64
		wantTasks int // -1: no tasks key
	}{
		{"latest", "", 200, 2, 3},
		{"version 1", "?version=1", 200, 1, 4},
		{"without tasks", "?withTasks=false", 200, 2, -1},
		{"unknown version", "?version=9", 404, 0, 0},
		{"bad version", "?version=0", 400, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.must(t, tt.wantCode, reader, http.MethodGet, base+"/my-flow"+tt.query, nil)
			if tt.wantCode != 200 {
				return
			}
			assert.Equal(t, tt.wantVer, res.body["version"])
			if tt.wantTasks < 0 {
				assert.NotContains(t, res.body, "tasks")
			} else {
				assert.Len(t, res.body["tasks"], tt.wantTasks)
			}
		})
	}

	log := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/my-flow/changelog", nil).list
	require.Len(t, log, 2)
	assert.Equal(t, []string{"2", "1"}, names(log, "version"))
	assert.Equal(t, []string{"back to one", "first cut"}, names(log, "reason"))
	assert.Equal(t, []string{"Olive Owner", "Eddie Editor"}, names(log, "author"))

	// Editors write but do not delete; owners do.
	f.must(t, http.StatusForbidden, editor, http.MethodDelete, base+"/my-flow", nil)
	f.must(t, http.StatusNoContent, owner, http.MethodDelete, base+"/my-flow", nil)
	res = f.must(t, http.StatusNotFound, reader, http.MethodGet, base+"/my-flow", nil)
	assert.Equal(t, "WORKFLOW_NOT_FOUND", res.body["reason"])
	f.must(t, http.StatusNotFound, owner, http.MethodDelete, base+"/my-flow", nil)

	// The name is free again; the new workflow starts at version 1.
	again := f.must(t, http.StatusCreated, editor, http.MethodPut, base, chain("my-flow", 1)).body
	assert.EqualValues(t, 1, again["version"])
	assert.Len(t, f.must(t, http.StatusOK, reader, http.MethodGet, base+"/my-flow/changelog", nil).list, 1)

	got5 := consume(t, f.kafka, 5)
	var types []string
	for _, e := range got5 {
		types = append(types, e.Type())
	}
	assert.Equal(t, []string{events.TypeWorkflowSaved, events.TypeWorkflowSaved, events.TypeWorkflowSaved,
		events.TypeWorkflowDeleted, events.TypeWorkflowSaved}, types)
	first, err := events.Decode[events.WorkflowSaved](got5[0])
	require.NoError(t, err)
	assert.Equal(t, "infra", first.Team)
	assert.Equal(t, "my-flow", first.Name)
	assert.True(t, first.Created)
	assert.True(t, first.Triggers.Manual)
	replaced, err := events.Decode[events.WorkflowSaved](got5[2])
	require.NoError(t, err)
	assert.True(t, replaced.Replaced)
	assert.Equal(t, "inactive", replaced.Status)
	deleted, err := events.Decode[events.WorkflowDeleted](got5[3])
	require.NoError(t, err)
	assert.Equal(t, events.WorkflowDeleted{Team: "infra", Name: "my-flow", Version: 2, Date: deleted.Date}, deleted)
}

// Concurrent PUTs of one workflow, each a change of it, each become their own version: none
// is lost. (Each differs from the others: one that finds the same definition saved as the
// latest version already writes nothing and answers that version.)
func TestConcurrentPutsLoseNothing(t *testing.T) {
	t.Parallel()
	bothStores(t, testConcurrentPutsLoseNothing)
}

func testConcurrentPutsLoseNothing(t *testing.T, store string) {
	f := newFixture(t, fixtureOptions{store: store})
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("busy", 1))

	const writers = 8
	var wg sync.WaitGroup
	versions := make(chan float64, writers)
	raw, err := json.Marshal(chain("busy", 2))
	require.NoError(t, err)
	for i := range writers {
		wg.Go(func() {
			res := f.call(t, editor, http.MethodPut, base, described(string(raw), fmt.Sprint("writer ", i)))
			if assert.Equal(t, http.StatusOK, res.code, string(res.raw)) {
				versions <- res.body["version"].(float64)
			}
		})
	}
	wg.Wait()
	close(versions)
	var got []float64
	for v := range versions {
		got = append(got, v)
	}
	assert.ElementsMatch(t, []float64{2, 3, 4, 5, 6, 7, 8, 9}, got)
	log := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/busy/changelog", nil).list
	assert.Len(t, log, writers+1)
	latest := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/busy", nil).body
	assert.EqualValues(t, writers+1, latest["version"])
}

// Revisions nothing names any more (replaced, or of a deleted workflow) are collected in
// the background; a workflow's versions all stay until it is deleted.
func TestRevisionsAreCollected(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, store string) {
		f := newFixture(t, fixtureOptions{store: store})
		revisions := func() int64 { return f.revisionCount(t, "tidy") }
		f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("tidy", 1))
		f.must(t, http.StatusOK, editor, http.MethodPut, base, chain("tidy", 2))
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"?replace=true", chain("tidy", 3))
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"?replace=true", chain("tidy", 4))
		require.Eventually(t, func() bool { return revisions() == 2 }, 60*time.Second, 10*time.Millisecond,
			"version 1 and the last revision of version 2 stay")
		assert.Len(t, f.must(t, http.StatusOK, reader, http.MethodGet, base+"/tidy?version=2", nil).body["tasks"], 6)

		f.must(t, http.StatusNoContent, owner, http.MethodDelete, base+"/tidy", nil)
		require.Eventually(t, func() bool { return revisions() == 0 }, 60*time.Second, 10*time.Millisecond)
	})
}

// A submit made right after a save runs what the save stored: the runs service reads the
// latest version through the internal route. Saves of several workflows run side by side
// with reads of them all, which must not answer a catalog older than a save's.
func TestSnapshotAfterSaveIsTheSave(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, store string) {
		f := newFixture(t, fixtureOptions{store: store})
		svc := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
		const flows, saves = 4, 8
		for i := range flows {
			f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain(fmt.Sprintf("flow-%d", i), 1))
		}
		var wg sync.WaitGroup
		for i := range flows {
			name := fmt.Sprintf("flow-%d", i)
			wg.Go(func() {
				for v := 2; v <= saves; v++ {
					saved := f.call(t, editor, http.MethodPut, base, chain(name, v))
					if !assert.Equal(t, http.StatusOK, saved.code, string(saved.raw)) {
						return
					}
					snap := f.call(t, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/"+name, nil)
					if assert.Equal(t, http.StatusOK, snap.code, string(snap.raw)) {
						assert.EqualValues(t, v, snap.body["version"], name)
						assert.Len(t, snap.body["tasks"], v+2, name)
					}
				}
			})
			// Reads of every workflow meanwhile, which must not put back what a save replaced.
			wg.Go(func() {
				for range saves * 2 {
					f.call(t, reader, http.MethodGet, base+"/"+name, nil)
				}
			})
		}
		wg.Wait()
	})
}
