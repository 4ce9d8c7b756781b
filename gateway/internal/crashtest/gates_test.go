package crashtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/baton-flow/baton/libs/auth"
)

// The gates of the crash test's runs, driven as people and the world drive them while the
// processes die: each approval is decided by two approvers, each run gets its callback
// (before its eventwait task waits, or once it does), and a decision or callback whose
// replica died under it is sent again to another. What was accepted is kept, to check at
// the end that each was applied exactly once.

// Names of the gate tasks, and what they wait on.
const (
	approveTask = "approve"
	hookTask    = "hook"
	lockTask    = "lock"
	heldTask    = "held"
	unlockTask  = "unlock"
	topic       = "go"
	// gatedEvery is how often a run is of the gated workflow: every run in flight slows
	// the embedded store's writes, and gated runs stay in flight for long.
	gatedEvery = 4
	// lockKeys is how many lock keys the gated runs share: about ten contend for each.
	lockKeys = 5
)

// gated reports whether run i is of the gated workflow.
func gated(i int) bool { return i%gatedEvery == 0 }

// nth is run i's place among the gated runs.
func nth(i int) int { return i / gatedEvery }

// approvers are the user ids that decide every approval: it needs both.
var approvers = []string{"0000000000000000000000a1", "0000000000000000000000a2"}

// gateTasks are the gate tasks added to a run's workflow: start → approve → hook → lock →
// held → unlock, and the run's mark waits for unlock.
func gateTasks() []map[string]any {
	dep := func(n string) []map[string]any { return []map[string]any{{"taskRef": n}} }
	key := []map[string]any{{"name": "key", "value": "$(params.key)"}}
	return []map[string]any{
		{"name": approveTask, "type": "approval", "params": []map[string]any{{"name": "numberOfApprovers", "value": 2}},
			"dependencies": dep("start")},
		{"name": hookTask, "type": "eventwait", "params": []map[string]any{{"name": "topic", "value": topic}},
			"dependencies": dep(approveTask)},
		{"name": lockTask, "type": "acquirelock", "params": key, "dependencies": dep(hookTask)},
		// The section the lock guards: a timer, so that kills catch runs holding the lock.
		{"name": heldTask, "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 60}},
			"dependencies": dep(lockTask)},
		{"name": unlockTask, "type": "releaselock", "params": key, "dependencies": dep(heldTask)},
	}
}

// lockKey is the lock run i takes.
func lockKey(i int) string { return fmt.Sprintf("k%d", nth(i)%lockKeys) }

// callbackBody is what run i's callback carries, and its hook task's result `data`.
func callbackBody(i int) string { return fmt.Sprintf(`{"run":%d}`, i) }

// earlyCallback reports whether run i gets its callback as soon as it is submitted, before
// its eventwait task waits; the others get it once the task waits.
func earlyCallback(i int) bool { return nth(i)%2 == 0 }

// repeats reports whether run i's first decision and its callback are sent twice on
// purpose, the second after the first was answered.
func repeats(i int) bool { return nth(i)%4 == 1 || nth(i)%4 == 2 }

// gates drives the gate tasks of the test's runs and keeps what it sent.
type gates struct {
	c   *cluster
	t   *testing.T
	ctx context.Context

	mu sync.Mutex
	// index maps a submitted run onto its number.
	index map[string]int
	// votes holds, by action id, the approvers whose decision a replica accepted.
	votes map[string][]string
	// taken marks the actions being decided.
	taken map[string]bool
	wg    sync.WaitGroup

	retried, repeated, early, late atomic.Int64
}

func newGates(ctx context.Context, t *testing.T, c *cluster) *gates {
	return &gates{c: c, t: t, ctx: ctx, index: map[string]int{}, votes: map[string][]string{}, taken: map[string]bool{}}
}

// submitted records run id as run i and, for an early one, sends its callback.
func (g *gates) submitted(i int, id string) {
	g.mu.Lock()
	g.index[id] = i
	g.mu.Unlock()
	if earlyCallback(i) {
		g.early.Add(1)
		g.wg.Go(func() { g.callback(i, id) })
	}
}

// watch looks for open actions until ctx ends, and decides each it finds.
func (g *gates) watch() {
	for g.ctx.Err() == nil {
		page, ok := g.c.call(g.ctx, "/api/v2/team/crash/action/query?statuses=submitted&limit=1000")
		if ok {
			list, _ := page["content"].([]any)
			for _, x := range list {
				a, _ := x.(map[string]any)
				id, _ := a["id"].(string)
				run, _ := a["workflowRunRef"].(string)
				g.mu.Lock()
				i, known := g.index[run]
				fresh := known && !g.taken[id]
				if fresh {
					g.taken[id] = true
				}
				g.mu.Unlock()
				if fresh {
					g.wg.Go(func() { g.decide(i, run, id) })
				}
			}
		}
		// The pace of a person looking at the list, not a wait for a condition.
		pause(100 * time.Millisecond)
	}
}

// decide approves action id of run i as both approvers, at once, and then sends the
// run's callback when it is not an early one.
func (g *gates) decide(i int, run, id string) {
	var wg sync.WaitGroup
	for n, who := range approvers {
		wg.Go(func() {
			pause(time.Duration(rand.IntN(150)) * time.Millisecond)
			g.vote(id, who, n == 0 && repeats(i))
		})
	}
	wg.Wait()
	if !earlyCallback(i) {
		g.late.Add(1)
		g.awaitHook(run)
		g.callback(i, run)
	}
}

// vote sends who's approval of action id until a replica answers it, and records it once
// accepted; again, when again is set, which must be answered as recorded (the same
// decision by the same person), and counted once all the same.
func (g *gates) vote(id, who string, again bool) {
	body := fmt.Sprintf(`[{"id":%q,"approved":true,"comments":"by %s"}]`, id, who)
	p := auth.Principal{Type: auth.TypeUser, ID: who, Name: "approver " + who[len(who)-2:], Person: who,
		Teams: map[string]string{"crash": auth.RoleEditor}}
	res, ok := g.c.send(g.ctx, http.MethodPut, "/api/v2/team/crash/action", p, body)
	if !ok {
		return
	}
	if res.tries > 1 {
		g.retried.Add(1)
	}
	// A try that reached a replica which died stored the vote: the try after it is the
	// same decision by the same person, answered as recorded.
	if res.status != http.StatusNoContent {
		assert.Fail(g.t, "a decision was refused", "%s by %s: %d after %d tries: %s", id, who, res.status, res.tries, res.body)
		return
	}
	g.mu.Lock()
	g.votes[id] = append(g.votes[id], who)
	g.mu.Unlock()
	if !again {
		return
	}
	g.repeated.Add(1)
	res, ok = g.c.send(g.ctx, http.MethodPut, "/api/v2/team/crash/action", p, body)
	if ok {
		assert.Equal(g.t, http.StatusNoContent, res.status, "%s by %s, again: %s", id, who, res.body)
	}
}

// awaitHook waits until run's eventwait task waits.
func (g *gates) awaitHook(run string) {
	for g.ctx.Err() == nil {
		if r, ok := g.c.get(g.ctx, run); ok {
			if t := taskOf(r, hookTask); t != nil && t["status"] != "notstarted" {
				return
			}
		}
		pause(50 * time.Millisecond)
	}
}

// callback sends run i's callback until a replica answers it; for some runs twice.
func (g *gates) callback(i int, run string) {
	path := "/api/v2/callback?ref=" + url.QueryEscape(run) + "&topic=" + topic + "&status=Succeeded"
	p := auth.Principal{Type: auth.TypeUser, ID: "u", Name: "u", Roles: []string{auth.RoleAdmin}}
	for n := range 2 {
		res, ok := g.c.send(g.ctx, http.MethodPost, path, p, callbackBody(i))
		if !ok {
			return
		}
		if res.tries > 1 {
			g.retried.Add(1)
		}
		// A callback on a run that has ended is refused: one sent again may meet it so.
		if res.status != http.StatusNoContent && !(res.status == http.StatusConflict && (n > 0 || res.reached)) {
			assert.Fail(g.t, "a callback was refused", "run %s: %d after %d tries: %s", run, res.status, res.tries, res.body)
			return
		}
		if n > 0 || !repeats(i) {
			return
		}
		g.repeated.Add(1)
	}
}

// sent is a request's answer once a live replica gave one.
type sent struct {
	status int
	body   string
	// tries counts the requests sent; reached is set when one that failed may have been
	// carried out by its replica before it died.
	tries   int
	reached bool
}

// send sends a request as p to a live replica, again to any live one while replicas fail
// it as a dying one does (no answer, or a 5xx); ok is false when ctx ended first.
func (c *cluster) send(ctx context.Context, method, path string, p auth.Principal, body string) (sent, bool) {
	var res sent
	for ctx.Err() == nil {
		base := c.runsURL()
		if base == "" {
			pause(20 * time.Millisecond)
			continue
		}
		res.tries++
		req, _ := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader([]byte(body)))
		req.Header.Set("Content-Type", "application/json")
		_ = c.signer.SetHeaders(p, req.Header.Set)
		r, err := c.client.Do(req)
		if err != nil {
			res.reached = res.reached || !errors.Is(err, syscall.ECONNREFUSED)
			pause(20 * time.Millisecond)
			continue
		}
		raw, _ := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if r.StatusCode >= 500 {
			res.reached = true
			pause(20 * time.Millisecond)
			continue
		}
		res.status, res.body = r.StatusCode, string(raw)
		return res, true
	}
	return res, false
}

// taskOf answers task name of run r, as the API shows it.
func taskOf(r map[string]any, name string) map[string]any {
	tasks, _ := r["tasks"].([]any)
	for _, x := range tasks {
		if t, _ := x.(map[string]any); t["name"] == name {
			return t
		}
	}
	return nil
}

// checkGates checks, once every run has completed, that each gate of each run ended once
// and right: the approval by the two votes sent, each once; the callback taken with its
// data; the lock held by one run at a time and let go by all.
func (g *gates) checkGates(ctx context.Context, ids []string, runs map[string]map[string]any) {
	t := g.t
	type hold struct {
		run        string
		start, end time.Time
	}
	holds := map[string][]hold{}
	waited := 0
	for i, id := range ids {
		r := runs[id]
		if !gated(i) {
			continue
		}
		for _, name := range []string{approveTask, hookTask, lockTask, heldTask, unlockTask} {
			if task := taskOf(r, name); assert.NotNil(t, task, "run %s task %s", id, name) {
				assert.Equal(t, "succeeded", task["status"], "run %s task %s: %v", id, name, task["statusMessage"])
			}
		}
		if hook := taskOf(r, hookTask); hook != nil {
			assert.Equal(t, []any{map[string]any{"name": "data", "value": callbackBody(i)}}, hook["results"], "run %s callback data", id)
		}
		if unlock := taskOf(r, unlockTask); unlock != nil {
			assert.Empty(t, unlock["statusMessage"], "run %s let go of a lock it held", id)
		}

		// The action: approved by exactly the votes accepted, each once.
		approve := taskOf(r, approveTask)
		if approve == nil {
			continue
		}
		// The first attempt's action: the task run's id with its dot a dash, and the attempt.
		act := strings.ReplaceAll(fmt.Sprintf("%v-1", approve["id"]), ".", "-")
		a, ok := g.c.call(ctx, "/api/v2/team/crash/action/"+act)
		if !assert.True(t, ok, "action %s of run %s", act, id) {
			continue
		}
		assert.Equal(t, "approved", a["status"], "action %s", act)
		var by []string
		actioners, _ := a["actioners"].([]any)
		for _, x := range actioners {
			v, _ := x.(map[string]any)
			who, _ := v["approverId"].(string)
			by = append(by, who)
		}
		g.mu.Lock()
		want := slices.Clone(g.votes[act])
		g.mu.Unlock()
		slices.Sort(by)
		slices.Sort(want)
		assert.Equal(t, approvers, want, "action %s: the votes a replica accepted", act)
		assert.Equal(t, want, by, "action %s: its actioners, one per vote accepted", act)

		// The lock's section: from the run told it holds the lock to its release task's
		// start, both within the lock's true hold.
		lock, unlock := taskOf(r, lockTask), taskOf(r, unlockTask)
		if lock == nil || unlock == nil {
			continue
		}
		from, to := ended(t, lock), started(t, unlock)
		if d, _ := lock["duration"].(float64); d > 100 {
			waited++
		}
		assert.False(t, to.Before(from), "run %s released its lock before it held it", id)
		holds[lockKey(i)] = append(holds[lockKey(i)], hold{run: id, start: from, end: to})
	}
	// The API shows times to the millisecond: a section may seem to end up to 2 ms late.
	const slack = 2 * time.Millisecond
	for key, list := range holds {
		sort.Slice(list, func(a, b int) bool { return list[a].start.Before(list[b].start) })
		for n := 1; n < len(list); n++ {
			prev, cur := list[n-1], list[n]
			assert.False(t, cur.start.Before(prev.end.Add(-slack)),
				"lock %s: run %s held it from %s while run %s held it until %s", key, cur.run,
				cur.start.Format(time.StampMilli), prev.run, prev.end.Format(time.StampMilli))
		}
	}
	t.Logf("gates: %d decisions and callbacks sent again after a replica died, %d repeated on purpose; %d callbacks early, %d late; %d runs waited over 100 ms for their lock",
		g.retried.Load(), g.repeated.Load(), g.early.Load(), g.late.Load(), waited)

	// Nothing is left held or waited for: a lock let go by all is removed.
	left, err := g.c.findLocks(ctx)
	if assert.NoError(t, err) {
		assert.Empty(t, left, "locks left held or waited for")
	}
	page, ok := g.c.call(ctx, "/api/v2/team/crash/action/query?statuses=submitted")
	if assert.True(t, ok) {
		assert.EqualValues(t, 0, page["totalElements"], "actions left open")
	}
}

func started(t *testing.T, task map[string]any) time.Time {
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(task["startTime"]))
	assert.NoError(t, err, "task %v startTime", task["name"])
	return at
}

func ended(t *testing.T, task map[string]any) time.Time {
	d, _ := task["duration"].(float64)
	return started(t, task).Add(time.Duration(d) * time.Millisecond)
}

// dumpGates logs the lock records, the decisions not yet applied and what the store holds
// of the stuck runs, for a stall to be read against the kills.
func (g *gates) dumpGates(ctx context.Context, stuck []string) {
	if g.c.runsDB != "" {
		locks, err := g.c.findLocks(ctx)
		g.t.Logf("locks: %v %v", locks, err)
		left, err := g.c.findInFlight(ctx)
		for _, r := range left {
			if slices.Contains(stuck, r.ID) {
				g.t.Logf("live: %+v", r)
			}
		}
		if err != nil {
			g.t.Logf("live: %v", err)
		}
		return
	}
	dump := func(coll string, filter bson.M, fields ...string) {
		opts := options.Find()
		if len(fields) > 0 {
			proj := bson.M{}
			for _, f := range fields {
				proj[f] = 1
			}
			opts.SetProjection(proj)
		}
		cur, err := g.c.db.Collection(coll).Find(ctx, filter, opts)
		var docs []bson.M
		if err == nil {
			err = cur.All(ctx, &docs)
		}
		if err != nil {
			g.t.Logf("%s: %v", coll, err)
		}
		for _, d := range docs {
			g.t.Logf("%s: %v", coll, d)
		}
	}
	dump("locks", bson.M{})
	dump("unapplied", bson.M{})
	dump("live", bson.M{"_id": bson.M{"$in": stuck}}, "owner", "version", "phase", "wakeAt", "awaitingApproval", "callbacks")
}
