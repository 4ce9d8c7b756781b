package runs_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/runs"
)

// runWorkflow is a runworkflow task starting workflow ref; wait=false fires and forgets.
func runWorkflow(name, ref string, wait bool) map[string]any {
	return map[string]any{"name": name, "type": "runworkflow", "params": []map[string]any{
		{"name": "workflowRef", "value": ref}, {"name": "wait", "value": wait}}}
}

func sleepTask(name string, millis int) map[string]any {
	return map[string]any{"name": name, "type": "sleep", "params": []map[string]any{{"name": "duration", "value": millis}}}
}

// fanOut is start → every task side by side → end (join all).
func fanOut(name string, tasks ...map[string]any) map[string]any {
	all := []map[string]any{{"name": "start", "type": "start"}}
	var deps []map[string]any
	for _, t := range tasks {
		t["dependencies"] = []map[string]any{{"taskRef": "start"}}
		deps = append(deps, map[string]any{"taskRef": t["name"]})
		all = append(all, t)
	}
	all = append(all, map[string]any{"name": "end", "type": "end", "dependencies": deps})
	return map[string]any{"name": name, "status": "active", "tasks": all}
}

// runsOf lists the runs of a team's workflow by id, each once (a run being put away in
// the archive may be listed twice for a moment).
func (f *fixture) runsOf(t testing.TB, p auth.Principal, team, workflow string) map[string]map[string]any {
	t.Helper()
	page := f.must(t, http.StatusOK, p, http.MethodGet,
		fmt.Sprintf("/api/v2/team/%s/workflowrun/query?workflows=%s&limit=1000", team, workflow), nil).body
	out := map[string]map[string]any{}
	for _, item := range page["content"].([]any) {
		run := item.(map[string]any)
		out[run["id"].(string)] = run
	}
	return out
}

// settled waits until every run of a workflow has completed and no run has appeared or
// moved for quiet, and answers them; it fails the test after a deadline.
func (f *fixture) settled(t testing.TB, p auth.Principal, team, workflow string, quiet time.Duration) map[string]map[string]any {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	var last map[string]map[string]any
	var lastKey string
	since := time.Now()
	for time.Now().Before(deadline) {
		all := f.runsOf(t, p, team, workflow)
		ids := slices.Sorted(maps.Keys(all))
		key, done := fmt.Sprint(len(all)), true
		for _, id := range ids {
			run := all[id]
			key += id + fmt.Sprint(run["status"], run["phase"])
			done = done && (run["phase"] == "completed" || run["phase"] == "finalized")
		}
		if key != lastKey || !done {
			lastKey, since = key, time.Now()
		} else if time.Since(since) >= quiet {
			return all
		}
		last = all
		<-time.After(20 * time.Millisecond)
	}
	t.Fatalf("the runs of %s never settled; last: %d runs", workflow, len(last))
	return nil
}

// waitRunAs is waitRun for a member of any team, with the patience of a chain of runs
// nested ten deep on a busy machine.
func (f *fixture) waitRunAs(t testing.TB, p auth.Principal, team, id string, cond func(run map[string]any) bool) map[string]any {
	t.Helper()
	var last map[string]any
	require.Eventually(t, func() bool {
		r := f.do(t, p, http.MethodGet, fmt.Sprintf("/api/v2/team/%s/workflowrun/%s", team, id), nil)
		last = r.body
		return r.code == http.StatusOK && cond(r.body)
	}, time.Minute, 20*time.Millisecond, "run %s never reached the condition; last: %v", id, &last)
	return last
}

// slotsHeld reads how many of team's concurrency slots are held.
func (f *fixture) slotsHeld(t testing.TB, team string) int {
	t.Helper()
	var slots struct {
		N int `bson:"n"`
	}
	err := f.db.Collection("counters").FindOne(context.Background(), bson.M{"_id": "slots/" + team}).Decode(&slots)
	if err != nil && err != mongo.ErrNoDocuments {
		require.NoError(t, err)
	}
	return slots.N
}

// A workflow that runs itself stops at the depth limit: exactly maxDepth+1 runs, the
// deepest one's runworkflow task invalid, every run failed, no slot held afterwards.
func TestSelfRecursionStopsAtTheDepthLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tests := []struct {
		name     string
		team     string
		maxDepth int // as the team's run context gives it; 0 when the setting is not known
		wantRuns int
	}{
		{"default limit", "infra", 0, 11},
		{"runs.maxDepth 3", "lab", 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lead := member("u-lead-"+tt.team, "Lee Lead", tt.team, auth.RoleOwner)
			f.ctxs.mu.Lock()
			f.ctxs.tc[tt.team] = runs.TeamContext{MaxMonthly: 1000, MaxDuration: 60, MaxConcurrent: 2, TaskDefaultTimeout: 10, MaxDepth: tt.maxDepth}
			f.ctxs.mu.Unlock()
			f.defs.put(tt.team, chain("loop", runWorkflow("again", "loop", true)))

			root := f.must(t, http.StatusCreated, lead, http.MethodPost, "/api/v2/team/"+tt.team+"/workflow/loop/submit?start=true", nil).body
			done := f.waitRunAs(t, lead, tt.team, root["id"].(string), completed)
			assert.Equal(t, "failed", done["status"], done["statusMessage"])

			all := f.settled(t, lead, tt.team, "loop", 500*time.Millisecond)
			require.Len(t, all, tt.wantRuns)
			depths := map[float64]int{}
			for _, run := range all {
				assert.Equal(t, "failed", run["status"], "%v", run)
				assert.Equal(t, root["id"], run["rootRun"], "%v", run)
				depths[run["depth"].(float64)]++
			}
			for d := range tt.wantRuns {
				assert.Equal(t, 1, depths[float64(d)], "one run at depth %d: %v", d, depths)
			}
			var deepest map[string]any
			for id, run := range all {
				if run["depth"] == float64(tt.wantRuns-1) {
					deepest = f.must(t, http.StatusOK, lead, http.MethodGet, "/api/v2/team/"+tt.team+"/workflowrun/"+id, nil).body
				}
			}
			require.NotNil(t, deepest)
			task := deepest["tasks"].([]any)[1].(map[string]any)
			assert.Equal(t, "invalid", task["status"], "%v", task)
			assert.Contains(t, task["statusMessage"], "runs.maxDepth")
			assert.Nil(t, task["workflowRunChildRef"])
			require.Eventually(t, func() bool { return f.slotsHeld(t, tt.team) == 0 }, 10*time.Second, 10*time.Millisecond)
		})
	}
}

// A workflow that starts itself twice at every level stays within the depth limit yet
// would hold 2^11-1 runs: the tree's size is bounded too (runs.maxTreeRuns). Siblings
// that start at the same moment may each take the last place, so the tree ends within
// twice the limit, never beyond.
func TestSelfFanOutStopsAtTheTreeLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const limit = 12
	lead := member("u-lead-wide", "Lee Lead", "wide", auth.RoleOwner)
	f.ctxs.mu.Lock()
	f.ctxs.tc["wide"] = runs.TeamContext{MaxMonthly: 100000, MaxDuration: 60, MaxConcurrent: 2, TaskDefaultTimeout: 10, MaxTreeRuns: limit}
	f.ctxs.mu.Unlock()
	f.defs.put("wide", fanOut("split", runWorkflow("left", "split", true), runWorkflow("right", "split", true)))

	root := f.must(t, http.StatusCreated, lead, http.MethodPost, "/api/v2/team/wide/workflow/split/submit?start=true", nil).body
	done := f.waitRunAs(t, lead, "wide", root["id"].(string), completed)
	assert.Equal(t, "failed", done["status"], done["statusMessage"])

	all := f.settled(t, lead, "wide", "split", 500*time.Millisecond)
	t.Logf("%d runs in the tree", len(all))
	assert.Greater(t, len(all), limit, "the tree grew up to its limit")
	assert.LessOrEqual(t, len(all), 1+2*limit, "the tree stopped at its limit")
	limited := 0
	for id, run := range all {
		assert.Equal(t, root["id"], run["rootRun"], "%v", run)
		detail := f.must(t, http.StatusOK, lead, http.MethodGet, "/api/v2/team/wide/workflowrun/"+id, nil).body
		for _, task := range detail["tasks"].([]any) {
			task := task.(map[string]any)
			if msg, _ := task["statusMessage"].(string); strings.Contains(msg, "runs.maxTreeRuns") {
				assert.Equal(t, "invalid", task["status"], "%v", task)
				limited++
			}
		}
	}
	assert.Positive(t, limited, "runworkflow tasks refused at the limit")
	require.Eventually(t, func() bool { return f.slotsHeld(t, "wide") == 0 }, 10*time.Second, 10*time.Millisecond)
}

// A runworkflow task's retries start a new child run per attempt, as a runner task's
// send the attempt out again; the task ends with its last child's status.
func TestChildRunRetries(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	failing := map[string]any{"name": "fail", "type": "setwfstatus", "params": []map[string]any{{"name": "status", "value": "failed"}}}
	f.defs.put("infra", chain("fails", failing))
	task := runWorkflow("call", "fails", true)
	task["retries"], task["retryDelay"] = 1, 0
	f.defs.put("infra", chain("caller", task))

	root := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/caller/submit?start=true", nil).body
	done := f.waitRunAs(t, owner, "infra", root["id"].(string), completed)
	assert.Equal(t, "failed", done["status"], done["statusMessage"])
	call := done["tasks"].([]any)[1].(map[string]any)
	assert.Equal(t, "failed", call["status"], "%v", call)
	assert.EqualValues(t, 2, call["attempt"], "%v", call)

	children := f.settled(t, owner, "infra", "fails", 200*time.Millisecond)
	require.Len(t, children, 2, "one child run per attempt")
	for _, child := range children {
		assert.Equal(t, "failed", child["status"], "%v", child)
		assert.Equal(t, root["id"], child["parentRun"], "%v", child)
	}
	assert.Contains(t, children, valueOf(t, call["results"], "workflowRunRef").(string), "the task names its last child")
}

// Cancelling the root of a tree that is still growing stops all of it: the runs in
// flight, and those being created as the cancel arrives, end cancelled and no new
// run appears.
func TestCancelStopsAGrowingTree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// Deep enough that only the cancel can stop the trees.
	f.ctxs.tc["infra"] = runs.TeamContext{MaxMonthly: 100000, MaxDuration: 60, MaxConcurrent: 100, TaskDefaultTimeout: 10, MaxDepth: 200}

	t.Run("deep and sleeping", func(t *testing.T) {
		// Each level sleeps a moment, then starts the next and waits for it.
		f.defs.put("infra", chain("deep", sleepTask("nap", 100), runWorkflow("again", "deep", true)))
		root := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/deep/submit?start=true", nil).body
		require.Eventually(t, func() bool { return len(f.runsOf(t, owner, "infra", "deep")) >= 3 }, 20*time.Second, 10*time.Millisecond)
		f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+root["id"].(string)+"/cancel", nil)

		all := f.settled(t, owner, "infra", "deep", time.Second)
		t.Logf("%d runs in the tree when it settled", len(all))
		assert.Less(t, len(all), 50, "the tree stopped growing")
		for _, run := range all {
			assert.Equal(t, "cancelled", run["status"], "%v", run)
		}
	})

	t.Run("wide, cancelled while its children are created", func(t *testing.T) {
		// Two children of each run are created at once, fire-and-forget ones among them,
		// while the run sleeps: every submit is followed at once by its cancel.
		f.defs.put("infra", fanOut("wide", runWorkflow("left", "wide", true), runWorkflow("right", "wide", false), sleepTask("nap", 600000)))
		for range 5 {
			root := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/wide/submit?start=true", nil).body
			f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+root["id"].(string)+"/cancel", nil)
		}
		all := f.settled(t, owner, "infra", "wide", time.Second)
		t.Logf("%d runs in the five trees when they settled", len(all))
		for _, run := range all {
			assert.Equal(t, "cancelled", run["status"], "%v", run)
		}
	})

	t.Run("a fire-and-forget child of a cancelled run", func(t *testing.T) {
		f.defs.put("infra", chain("idler", sleepTask("nap", 600000)))
		f.defs.put("infra", fanOut("firer", runWorkflow("fire", "idler", false), sleepTask("nap", 600000)))
		parent := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/firer/submit?start=true", nil).body
		fired := f.waitRunAs(t, owner, "infra", parent["id"].(string), func(run map[string]any) bool {
			return run["tasks"].([]any)[1].(map[string]any)["status"] == "succeeded"
		})
		child := fired["tasks"].([]any)[1].(map[string]any)["workflowRunChildRef"].(string)
		f.waitRunAs(t, owner, "infra", child, func(run map[string]any) bool { return run["status"] == "running" })
		f.must(t, http.StatusOK, owner, http.MethodDelete, infra+"/workflowrun/"+parent["id"].(string)+"/cancel", nil)
		gone := f.waitRunAs(t, owner, "infra", child, completed)
		assert.Equal(t, "cancelled", gone["status"])
		assert.Contains(t, gone["statusMessage"], parent["id"])
	})
	require.Eventually(t, func() bool { return f.slotsHeld(t, "infra") == 0 }, 10*time.Second, 10*time.Millisecond)
}

// A cascade that a crash cut short is finished by the reconciler: a child whose parent is
// stored stopped is cancelled though no cancel ever reached it.
func TestReconcilerFinishesAnInterruptedCascade(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", chain("slowchild", sleepTask("nap", 600000)))
	f.defs.put("infra", chain("waiter", runWorkflow("kid", "slowchild", true)))
	waiter := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/waiter/submit?start=true", nil).body
	id := waiter["id"].(string)
	running := f.waitRunAs(t, owner, "infra", id, func(run map[string]any) bool {
		return run["tasks"].([]any)[1].(map[string]any)["workflowRunChildRef"] != nil
	})
	child := running["tasks"].([]any)[1].(map[string]any)["workflowRunChildRef"].(string)

	// The parent's cancel as a replica that died right after storing it leaves it: the
	// run stored stopped, nothing sent to its child.
	res, err := f.db.Collection("live").UpdateOne(context.Background(), bson.M{"_id": id},
		bson.M{"$set": bson.M{"status": "cancelled", "phase": "completed"}, "$inc": bson.M{"version": 1}})
	require.NoError(t, err)
	require.EqualValues(t, 1, res.ModifiedCount)

	gone := f.waitRunAs(t, owner, "infra", child, completed)
	assert.Equal(t, "cancelled", gone["status"])
	assert.Contains(t, gone["statusMessage"], id)
}

// A parent waiting on its children never deadlocks the team's slots: with two slots,
// three trees of three levels, each run waiting for its child, all complete.
func TestWaitingParentsNeverDeadlockSlots(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.ctxs.tc["infra"] = runs.TeamContext{MaxMonthly: 1000, MaxDuration: 60, MaxConcurrent: 2, TaskDefaultTimeout: 10}
	f.defs.put("infra", chain("grandchild", sleepTask("nap", 200)))
	f.defs.put("infra", chain("child", runWorkflow("kid", "grandchild", true)))
	f.defs.put("infra", chain("root", runWorkflow("kid", "child", true)))

	var ids []string
	for range 3 {
		run := f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/root/submit?start=true", nil).body
		ids = append(ids, run["id"].(string))
	}
	assert.LessOrEqual(t, f.slotsHeld(t, "infra"), 2)
	for _, id := range ids {
		done := f.waitRunAs(t, owner, "infra", id, completed)
		assert.Equal(t, "succeeded", done["status"], done["statusMessage"])
	}
	for _, workflow := range []string{"child", "grandchild"} {
		all := f.settled(t, owner, "infra", workflow, 200*time.Millisecond)
		assert.Len(t, all, 3, workflow)
		for _, run := range all {
			assert.Equal(t, "succeeded", run["status"], "%v", run)
		}
	}
	require.Eventually(t, func() bool { return f.slotsHeld(t, "infra") == 0 }, 10*time.Second, 10*time.Millisecond)
}
