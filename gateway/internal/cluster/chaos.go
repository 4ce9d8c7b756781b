package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/mongox"
)

// ChaosEnv is the settings of a cluster chaos runs on: no rate limit on the one admin
// token the workload uses.
var ChaosEnv = []string{"BATON_RATE_LIMIT=0"}

// ChaosConfig shapes a chaos run.
type ChaosConfig struct {
	// For is how long processes are killed while the workload goes on (default 5m).
	For time.Duration
	// KillEvery is the longest pause between two kills (default 4s; each pause is random
	// up to it).
	KillEvery time.Duration
	// DownFor is the longest a killed process stays down (default 2s).
	DownFor time.Duration
	// SubmitEvery is the pause between two workflow submits (default 500ms).
	SubmitEvery time.Duration
	// Settle bounds the wait, once the kills stop, for every run to end and every event
	// to reach the sink (default 4m): far above what they take.
	Settle time.Duration
	// Dir receives what the task scripts record of their executions.
	Dir string
	// Out receives the progress and the report.
	Out io.Writer
}

// Report is what a chaos run did and what it found wrong.
type Report struct {
	// Runs submitted through the API, by workflow.
	Runs map[string]int
	// Kills are the processes killed, by name.
	Kills map[string]int
	// Crashes counts processes that exited without being killed.
	Crashes int
	// Executions are the script tasks' executions, as they recorded them.
	Executions int
	// Decisions and Callbacks accepted; Events are the inbound CloudEvents sent.
	Decisions, Callbacks, Events int
	// Fires the schedule made up to the end of the kills (by their idempotency keys), and
	// the runs they made.
	Fires, ScheduledRuns int
	// LockHolds are the lock sections checked one at a time per key.
	LockHolds int
	// ChildRuns are the runs started by runworkflow tasks.
	ChildRuns int
	// Sunk are the status events the sink received (without duplicates), and SunkRuns the
	// runs whose events it received whole.
	Sunk, SunkRuns int
	// Retries are API requests sent again after a process died under them.
	Retries int64
	// Problems are what broke; none means the run passed.
	Problems []string
}

// Err joins the problems into one error, nil when there are none.
func (r *Report) Err() error {
	if len(r.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("chaos found %d problems:\n  %s", len(r.Problems), strings.Join(r.Problems, "\n  "))
}

func (r *Report) problem(format string, args ...any) {
	r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
}

// Print writes the counts and the problems.
func (r *Report) Print(w io.Writer) {
	var kinds []string
	for k, n := range r.Runs {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	kills := 0
	for _, n := range r.Kills {
		kills += n
	}
	fmt.Fprintf(w, "runs submitted: %s\n", strings.Join(kinds, ", "))
	fmt.Fprintf(w, "processes killed: %d (%s); exited on their own: %d; API requests sent again: %d\n", kills, formatCounts(r.Kills), r.Crashes, r.Retries)
	fmt.Fprintf(w, "script executions: %d; child runs: %d; approvals decided: %d; callbacks: %d; lock sections: %d\n",
		r.Executions, r.ChildRuns, r.Decisions, r.Callbacks, r.LockHolds)
	fmt.Fprintf(w, "schedule: %d fires, %d runs; inbound CloudEvents: %d\n", r.Fires, r.ScheduledRuns, r.Events)
	fmt.Fprintf(w, "sink: %d status events, every one of %d runs\n", r.Sunk, r.SunkRuns)
	if len(r.Problems) == 0 {
		fmt.Fprintln(w, "chaos: every run final and right, every task once, every fire, decision, callback, lock and event once")
		return
	}
	fmt.Fprintf(w, "chaos: %d problems\n", len(r.Problems))
	for _, p := range r.Problems {
		fmt.Fprintln(w, "  "+p)
	}
}

func formatCounts(m map[string]int) string {
	var out []string
	for k, n := range m {
		out = append(out, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// The chaos team and its workflows.
const (
	chaosTeam = "chaos"
	// hookTopic is the eventwait tasks' topic.
	hookTopic = "go"
	// lockKeys is how many lock keys the gated runs share.
	lockKeys = 3
)

// The workflows submitted, in the proportions of the mix (tick fires from its schedule,
// ingest from CloudEvents).
var mix = []string{"chain", "chain", "fanout", "gated", "parent"}

// chaos is one chaos run's state.
type chaos struct {
	c    *Cluster
	cfg  ChaosConfig
	api  *api
	sink *sink
	rep  *Report
	// approver decides the approvals, as the team's member approverEmail.
	approver *api
	// children are the child runs by parent, once read by the checks.
	children map[string][]runView

	mu sync.Mutex
	// runs are the runs submitted by the workload, by id: their workflow.
	runs map[string]string
	// early are the gated runs sent their callback as soon as submitted.
	early map[string]bool
	// lockKey is each gated run's lock key.
	lockKey map[string]string
	// callbacks are the runs whose callback was accepted, with how many.
	callbacks map[string]int
	// votes are the approvals accepted, by action.
	votes  map[string]int
	events int
}

// RunChaos runs the chaos workload on c: workflows of every kind submitted through the
// gateways, approvals decided and callbacks sent through them, a schedule firing every
// second, CloudEvents coming in, status events going out to a sink served here, while a
// random Baton process (a gateway or any service replica) is killed with SIGKILL every few
// seconds and started again a moment later. Then it waits for everything to end and checks
// every run, task, fire, decision, lock and event; the report lists what broke.
func RunChaos(ctx context.Context, c *Cluster, cfg ChaosConfig) (*Report, error) {
	if cfg.For <= 0 {
		cfg.For = 5 * time.Minute
	}
	if cfg.KillEvery <= 0 {
		cfg.KillEvery = 4 * time.Second
	}
	if cfg.DownFor <= 0 {
		cfg.DownFor = 2 * time.Second
	}
	if cfg.SubmitEvery <= 0 {
		cfg.SubmitEvery = 500 * time.Millisecond
	}
	if cfg.Settle <= 0 {
		cfg.Settle = 4 * time.Minute
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	s, err := newSink()
	if err != nil {
		return nil, err
	}
	defer s.close()
	ch := &chaos{c: c, cfg: cfg, api: newAPI(c.GatewayURLs(), c.Token), sink: s,
		rep:  &Report{Runs: map[string]int{}, Kills: map[string]int{}},
		runs: map[string]string{}, early: map[string]bool{}, lockKey: map[string]string{}, callbacks: map[string]int{}, votes: map[string]int{}}
	if err := ch.setup(ctx); err != nil {
		return nil, fmt.Errorf("set up the workload: %w", err)
	}
	schedule, err := ch.startSchedule(ctx)
	if err != nil {
		return nil, err
	}
	ch.note("workload and kills for %s", cfg.For)

	loadCtx, stopLoad := context.WithTimeout(ctx, cfg.For)
	defer stopLoad()
	var wg sync.WaitGroup
	wg.Go(func() { ch.kill(loadCtx) })
	wg.Go(func() { ch.submit(ctx, loadCtx) })
	wg.Go(func() { ch.sendEvents(ctx, loadCtx) })
	// Decisions and callbacks go on until every run has ended.
	gatesCtx, stopGates := context.WithCancel(ctx)
	defer stopGates()
	var gates sync.WaitGroup
	gates.Go(func() { ch.decide(gatesCtx) })
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ch.note("kills stopped; waiting for every run to end")

	cut := time.Now()
	settleCtx, cancel := context.WithTimeout(ctx, cfg.Settle)
	defer cancel()
	finished := ch.awaitRuns(settleCtx)
	stopGates()
	gates.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	ch.check(settleCtx, finished, schedule, cut)
	if err := ch.stopSchedule(settleCtx, schedule); err != nil {
		ch.rep.problem("stop the schedule: %v", err)
	}
	for _, st := range c.Stats() {
		ch.rep.Crashes += st.Failures
	}
	if ch.rep.Crashes > 0 {
		ch.rep.problem("%d processes exited without being killed (their logs under %s)", ch.rep.Crashes, filepath.Join(c.cfg.Dir, "logs"))
	}
	ch.rep.Retries = ch.api.retries.Load() + ch.approver.retries.Load()
	return ch.rep, nil
}

func (ch *chaos) note(format string, args ...any) { ch.c.note(format, args...) }

// problem records a problem found while the workload runs.
func (ch *chaos) problem(format string, args ...any) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.rep.problem(format, args...)
}

// script is a task that records each of its executions in a file named after its task
// run, then lasts a moment, so that kills catch it before and after its effect.
func (ch *chaos) script(name string, deps ...string) map[string]any {
	return map[string]any{"name": name, "type": "script", "retries": 10, "retryDelay": 0,
		"params":       []map[string]any{{"name": "script", "value": "sleep 0.1; echo once >> " + ch.cfg.Dir + "/$(context.params.taskrun-ref); sleep 0.1"}},
		"dependencies": dependencies(deps...)}
}

func dependencies(names ...string) []map[string]any {
	out := []map[string]any{}
	for _, n := range names {
		out = append(out, map[string]any{"taskRef": n})
	}
	return out
}

func task(name, typ string, params map[string]any, deps ...string) map[string]any {
	t := map[string]any{"name": name, "type": typ, "dependencies": dependencies(deps...)}
	if len(params) > 0 {
		var ps []map[string]any
		for k, v := range params {
			ps = append(ps, map[string]any{"name": k, "value": v})
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i]["name"].(string) < ps[j]["name"].(string) })
		t["params"] = ps
	}
	return t
}

// workflows are the workload's workflows, by name.
func (ch *chaos) workflows() map[string]map[string]any {
	end := func(deps ...string) map[string]any {
		t := task("end", "end", nil, deps...)
		t["join"] = "all"
		return t
	}
	start := task("start", "start", nil)
	return map[string]map[string]any{
		// A chain of three scripts.
		"chain": {"tasks": []map[string]any{start, ch.script("a", "start"), ch.script("b", "a"), ch.script("c", "b"), end("c")}},
		// Four scripts at once, joined.
		"fanout": {"tasks": []map[string]any{start, ch.script("f1", "start"), ch.script("f2", "start"), ch.script("f3", "start"),
			ch.script("f4", "start"), end("f1", "f2", "f3", "f4")}},
		// An approval decided through the API, a callback, then a section under a lock.
		"gated": {"params": []map[string]any{{"name": "key", "type": "text", "required": true}},
			"tasks": []map[string]any{start,
				task("approve", "approval", map[string]any{"numberOfApprovers": 1}, "start"),
				task("hook", "eventwait", map[string]any{"topic": hookTopic}, "approve"),
				task("lock", "acquirelock", map[string]any{"key": "$(params.key)"}, "hook"),
				ch.script("held", "lock"),
				task("unlock", "releaselock", map[string]any{"key": "$(params.key)"}, "held"),
				end("unlock")}},
		// A child run of chain, waited for, then a script of its own.
		"parent": {"tasks": []map[string]any{start, task("child", "runworkflow", map[string]any{"workflowRef": "chain"}, "start"),
			ch.script("after", "child"), end("after")}},
		// Started by inbound CloudEvents.
		"ingest": {"triggers": map[string]any{"event": map[string]any{"enabled": true}},
			"tasks": []map[string]any{start, ch.script("take", "start"), end("take")}},
		// Fired every second by a schedule.
		"tick": {"triggers": map[string]any{"schedule": map[string]any{"enabled": true}},
			"tasks": []map[string]any{start, end("start")}},
	}
}

// approverEmail is the team member who decides the approvals: only people decide them.
const approverEmail = "approver@example.com"

// setup makes the team with its approver and the approver's token, the workflows and the
// sink setting.
func (ch *chaos) setup(ctx context.Context) error {
	team := map[string]any{"name": chaosTeam, "members": []map[string]any{{"email": approverEmail, "role": "editor"}}}
	if _, err := ch.api.expect(ctx, http.MethodPost, "/team", team, http.StatusCreated); err != nil {
		return err
	}
	var users struct {
		Content []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"content"`
	}
	if err := ch.api.get(ctx, "/user/query?limit=1000", &users); err != nil {
		return err
	}
	for _, u := range users.Content {
		if u.Email != approverEmail {
			continue
		}
		res, err := ch.api.expect(ctx, http.MethodPost, "/token", map[string]any{"type": "user", "name": "chaos-approver", "principal": u.ID}, http.StatusCreated)
		if err != nil {
			return err
		}
		var tok struct {
			Token string `json:"token"`
		}
		if err := res.decode(&tok); err != nil {
			return err
		}
		ch.approver = newAPI(ch.api.gateways, tok.Token)
	}
	if ch.approver == nil {
		return fmt.Errorf("no user %s after making the team", approverEmail)
	}
	for name, wf := range ch.workflows() {
		wf["name"], wf["status"] = name, "active"
		// The workflows service learns of the new team from its event: until then, 404.
		wait, cancel := context.WithTimeout(ctx, time.Minute)
		err := poll(wait, func() error {
			_, err := ch.api.expect(wait, http.MethodPut, "/team/"+chaosTeam+"/workflow?replace=true", wf, http.StatusOK, http.StatusCreated)
			return err
		})
		cancel()
		if err != nil {
			return err
		}
	}
	body := []map[string]any{{"key": "events", "config": []map[string]any{{"key": "sinks", "value": ch.sink.url}}}}
	_, err := ch.api.expect(ctx, http.MethodPut, "/settings", body, http.StatusOK)
	return err
}

// schedule is the every-second schedule's id and when it was made.
type schedule struct {
	id      string
	created time.Time
}

// startSchedule makes the schedule firing tick every second, and waits for its first
// run's status events to reach the sink: by then the integrations replicas know the sink.
func (ch *chaos) startSchedule(ctx context.Context) (schedule, error) {
	res, err := ch.api.expect(ctx, http.MethodPost, "/team/"+chaosTeam+"/schedule", map[string]any{
		"name": "every-second", "workflowRef": "tick", "type": "cron", "cronSchedule": "* * * * * *", "timezone": "UTC",
		// Every fire makes its run however late the kills make it: a fire later than a
		// minute is missed otherwise, and fireOnce makes one run for a row of them.
		"misfirePolicy": "fireAll", "catchupWindow": "1h"}, http.StatusCreated)
	if err != nil {
		return schedule{}, err
	}
	var s struct {
		ID           string    `json:"id"`
		CreationDate time.Time `json:"creationDate"`
	}
	if err := res.decode(&s); err != nil {
		return schedule{}, err
	}
	ch.note("schedule %s fires tick every second; waiting for its status events at the sink", s.ID)
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := poll(wait, func() error {
		if ch.sink.count() == 0 {
			return errors.New("no status event at the sink")
		}
		return nil
	}); err != nil {
		return schedule{}, fmt.Errorf("the sink: %w", err)
	}
	// Every integrations replica reads the setting again within its cache's life (2 s).
	select {
	case <-ctx.Done():
		return schedule{}, ctx.Err()
	case <-time.After(3 * time.Second):
	}
	return schedule{id: s.ID, created: s.CreationDate}, nil
}

// stopSchedule sets the schedule inactive.
func (ch *chaos) stopSchedule(ctx context.Context, s schedule) error {
	var body map[string]any
	if err := ch.api.get(ctx, "/team/"+chaosTeam+"/schedule/"+s.id, &body); err != nil {
		return err
	}
	body["status"] = "inactive"
	for _, readOnly := range []string{"nextScheduleDate", "lastScheduleDate", "triggerDisabled", "creationDate"} {
		delete(body, readOnly)
	}
	_, err := ch.api.expect(ctx, http.MethodPut, "/team/"+chaosTeam+"/schedule", body, http.StatusOK)
	return err
}

// kill kills a random Baton process every so often and starts it again a moment later,
// until ctx ends.
func (ch *chaos) kill(ctx context.Context) {
	victims := ch.c.Baton()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(rand.Int64N(int64(ch.cfg.KillEvery)))):
		}
		name := victims[rand.IntN(len(victims))]
		if err := ch.c.Kill(name); err != nil {
			ch.problem("kill %s: %v", name, err)
			continue
		}
		ch.mu.Lock()
		ch.rep.Kills[name]++
		ch.mu.Unlock()
		<-time.After(time.Duration(rand.Int64N(int64(ch.cfg.DownFor))))
		// Started again whatever ctx says: the cluster must be whole for the checks.
		if err := ch.c.Start(context.WithoutCancel(ctx), name); err != nil {
			ch.problem("start %s again: %v", name, err)
		}
	}
}

// answerWithin bounds how long a submit or an event is sent again before the workload
// counts it unanswered, as a client gives up: far above the few seconds a restart takes.
const answerWithin = 2 * time.Minute

// submitters is how many clients submit at once, each waiting for its answer before the
// next: a closed loop, so that a cluster slowed by kills is not buried under retries.
const submitters = 2

// submit submits workflows of the mix until load ends, from submitters clients, each
// pausing SubmitEvery between its submits; each submit is sent again under its
// idempotency key until answered, or ctx ends.
func (ch *chaos) submit(ctx, load context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	var next atomic.Int64
	for range submitters {
		wg.Go(func() {
			for load.Err() == nil {
				ch.submitOne(ctx, &wg, int(next.Add(1)))
				select {
				case <-load.Done():
				case <-time.After(ch.cfg.SubmitEvery):
				}
			}
		})
	}
}

// submitOne submits the workload's nth run.
func (ch *chaos) submitOne(ctx context.Context, wg *sync.WaitGroup, n int) {
	wf := mix[n%len(mix)]
	body := map[string]any{"idempotencyKey": fmt.Sprintf("chaos-%d", n)}
	if wf == "gated" {
		body["params"] = map[string]any{"key": fmt.Sprintf("k%d", n%lockKeys)}
	}
	answerCtx, cancel := context.WithTimeout(ctx, answerWithin)
	defer cancel()
	res, err := ch.api.expect(answerCtx, http.MethodPost, "/team/"+chaosTeam+"/workflow/"+wf+"/submit?start=true", body,
		http.StatusCreated, http.StatusOK)
	var run struct {
		ID string `json:"id"`
	}
	if err == nil {
		err = res.decode(&run)
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if err != nil {
		ch.rep.problem("submit %s: %v", wf, err)
		return
	}
	ch.runs[run.ID] = wf
	ch.rep.Runs[wf]++
	if wf == "gated" {
		ch.lockKey[run.ID] = body["params"].(map[string]any)["key"].(string)
	}
	// Half the gated runs get their callback at once, kept until their task waits.
	if wf == "gated" && (n/len(mix))%2 == 0 {
		ch.early[run.ID] = true
		wg.Go(func() { ch.callback(ctx, run.ID) })
	}
}

// sendEvents sends a CloudEvent for ingest every second until load ends, each again under
// its id until answered or ctx ends.
func (ch *chaos) sendEvents(ctx, load context.Context) {
	for n := 0; ; n++ {
		select {
		case <-load.Done():
			return
		case <-time.After(time.Second):
		}
		body := fmt.Sprintf(`{"specversion":"1.0","id":"chaos-%d","source":"/chaos","type":"io.example.chaos","data":{"n":%d}}`, n, n)
		answerCtx, cancel := context.WithTimeout(ctx, answerWithin)
		res, err := ch.api.do(answerCtx, http.MethodPost, "/event?ref="+chaosTeam+"/ingest", "application/cloudevents+json", body)
		cancel()
		var run struct {
			ID string `json:"id"`
		}
		if err == nil && res.status != http.StatusCreated && res.status != http.StatusOK {
			err = fmt.Errorf("answered %v", res)
		}
		if err == nil {
			err = res.decode(&run)
		}
		ch.mu.Lock()
		if err != nil {
			ch.rep.problem("event chaos-%d: %v", n, err)
		} else {
			ch.runs[run.ID] = "ingest"
			ch.rep.Runs["ingest"]++
			ch.events++
		}
		ch.mu.Unlock()
	}
}

// decide approves the open actions of the workload's runs, and sends the callback of the
// gated runs that did not get it at once, until ctx ends.
func (ch *chaos) decide(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	taken := map[string]bool{}
	for ctx.Err() == nil {
		var page struct {
			Content []struct {
				ID  string `json:"id"`
				Run string `json:"workflowRunRef"`
			} `json:"content"`
		}
		if err := ch.api.get(ctx, "/team/"+chaosTeam+"/action/query?statuses=submitted&limit=1000", &page); err == nil {
			for _, a := range page.Content {
				if taken[a.ID] {
					continue
				}
				taken[a.ID] = true
				wg.Go(func() { ch.approve(ctx, a.ID, a.Run) })
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// approve approves action id and, unless run got its callback at once, sends it.
func (ch *chaos) approve(ctx context.Context, id, run string) {
	body := []map[string]any{{"id": id, "approved": true, "comments": "chaos"}}
	res, err := ch.approver.do(ctx, http.MethodPut, "/team/"+chaosTeam+"/action", "", body)
	switch {
	case err != nil:
		return // the run is reported as not ended
	case res.status == http.StatusNoContent:
		// Accepted, also when sent again after a process died under the first try: the
		// same decision by the same person is answered as applied.
		ch.mu.Lock()
		ch.votes[id]++
		ch.rep.Decisions++
		early := ch.early[run]
		ch.mu.Unlock()
		if !early {
			ch.callbackWhenWaiting(ctx, run)
		}
	default:
		ch.mu.Lock()
		ch.rep.problem("approval %s of run %s refused: %v", id, run, res)
		ch.mu.Unlock()
	}
}

// callbackWhenWaiting sends run's callback once its eventwait task waits.
func (ch *chaos) callbackWhenWaiting(ctx context.Context, run string) {
	for ctx.Err() == nil {
		var r runView
		if err := ch.api.get(ctx, "/team/"+chaosTeam+"/workflowrun/"+run, &r); err == nil {
			if t := r.task("hook"); t != nil && t.Status != "notstarted" {
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	ch.callback(ctx, run)
}

// callback sends run's callback, its data the run's id.
func (ch *chaos) callback(ctx context.Context, run string) {
	path := "/callback?ref=" + url.QueryEscape(run) + "&topic=" + hookTopic + "&status=Succeeded"
	res, err := ch.api.do(ctx, http.MethodPost, path, "", map[string]any{"run": run})
	ch.mu.Lock()
	defer ch.mu.Unlock()
	switch {
	case err != nil:
	case res.status == http.StatusNoContent, res.status == http.StatusConflict && res.reached:
		ch.callbacks[run]++
		ch.rep.Callbacks++
	default:
		ch.rep.problem("callback of run %s refused: %v", run, res)
	}
}

// runView is a run as the API shows it.
type runView struct {
	ID            string     `json:"id"`
	Workflow      string     `json:"workflowRef"`
	Status        string     `json:"status"`
	Phase         string     `json:"phase"`
	StatusMessage string     `json:"statusMessage"`
	Trigger       string     `json:"trigger"`
	ParentRun     string     `json:"parentRun"`
	Created       time.Time  `json:"creationDate"`
	Tasks         []taskView `json:"tasks"`
}

type taskView struct {
	ID            string  `json:"id"`
	Name          string  `json:"name"`
	Type          string  `json:"type"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	StartTime     string  `json:"startTime"`
	Duration      float64 `json:"duration"`
	Results       []struct {
		Name  string `json:"name"`
		Value any    `json:"value"`
	} `json:"results"`
}

func (r *runView) task(name string) *taskView {
	for i := range r.Tasks {
		if r.Tasks[i].Name == name {
			return &r.Tasks[i]
		}
	}
	return nil
}

// awaitRuns waits until every run of the workload has completed, and answers them.
func (ch *chaos) awaitRuns(ctx context.Context) map[string]*runView {
	ch.mu.Lock()
	ids := make([]string, 0, len(ch.runs))
	for id := range ch.runs {
		ids = append(ids, id)
	}
	ch.mu.Unlock()
	done := map[string]*runView{}
	for len(done) < len(ids) && ctx.Err() == nil {
		for _, id := range ids {
			if done[id] != nil {
				continue
			}
			var r runView
			if err := ch.api.get(ctx, "/team/"+chaosTeam+"/workflowrun/"+id, &r); err == nil && r.Phase == "completed" {
				done[id] = &r
			}
		}
		if len(done) < len(ids) {
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	ch.note("%d of %d runs completed", len(done), len(ids))
	return done
}

// check checks what ended against what was sent.
func (ch *chaos) check(ctx context.Context, done map[string]*runView, s schedule, cut time.Time) {
	rep := ch.rep
	ch.mu.Lock()
	runs := maps(ch.runs)
	votes := maps(ch.votes)
	callbacks := maps(ch.callbacks)
	lockKeys := maps(ch.lockKey)
	rep.Events = ch.events
	ch.mu.Unlock()

	type hold struct {
		run        string
		start, end time.Time
	}
	holds := map[string][]hold{}
	var ids []string
	for id, wf := range runs {
		r := done[id]
		if r == nil {
			rep.problem("run %s (%s) did not complete", id, wf)
			continue
		}
		ids = append(ids, id)
		if r.Status != "succeeded" {
			rep.problem("run %s (%s) ended %s: %s", id, wf, r.Status, r.StatusMessage)
		}
		wantTrigger := map[string]string{"ingest": "event"}[wf]
		if wantTrigger == "" {
			wantTrigger = "manual"
		}
		if r.Trigger != wantTrigger {
			rep.problem("run %s (%s) has trigger %q, want %q", id, wf, r.Trigger, wantTrigger)
		}
		ch.checkScripts(r)
		switch wf {
		case "parent":
			ch.checkChild(ctx, r)
		case "gated":
			if votes[actionOf(r)] != 1 {
				rep.problem("run %s: %d approvals accepted, want 1", id, votes[actionOf(r)])
			}
			if callbacks[id] != 1 {
				rep.problem("run %s: %d callbacks accepted, want 1", id, callbacks[id])
			}
			if hook := r.task("hook"); hook != nil && (len(hook.Results) != 1 || !strings.Contains(fmt.Sprint(hook.Results[0].Value), id)) {
				rep.problem("run %s: its callback's data is not the hook's result: %+v", id, hook.Results)
			}
			ch.checkAction(ctx, r)
			lock, unlock := r.task("lock"), r.task("unlock")
			if lock != nil && unlock != nil {
				from, err1 := time.Parse(time.RFC3339Nano, lock.StartTime)
				to, err2 := time.Parse(time.RFC3339Nano, unlock.StartTime)
				if err1 == nil && err2 == nil {
					k := lockKeys[id]
					holds[k] = append(holds[k], hold{run: id, start: from.Add(time.Duration(lock.Duration) * time.Millisecond), end: to})
				}
			}
		}
	}
	// The API shows times to the millisecond.
	const slack = 2 * time.Millisecond
	for key, list := range holds {
		sort.Slice(list, func(a, b int) bool { return list[a].start.Before(list[b].start) })
		for n := 1; n < len(list); n++ {
			if list[n].start.Before(list[n-1].end.Add(-slack)) {
				rep.problem("lock %s: run %s held it from %s while run %s held it until %s", key, list[n].run,
					list[n].start.Format(time.StampMilli), list[n-1].run, list[n-1].end.Format(time.StampMilli))
			}
		}
		rep.LockHolds += len(list)
	}
	ch.checkSchedule(ctx, s, cut)
	ch.checkSink(ctx, ids)
}

func maps[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// actionOf answers the id of the approval action of gated run r's first attempt: its task
// run's id with the dot a dash, and the attempt.
func actionOf(r *runView) string {
	t := r.task("approve")
	if t == nil {
		return ""
	}
	return strings.ReplaceAll(t.ID, ".", "-") + "-1"
}

// checkAction checks that gated run r's approval was decided once.
func (ch *chaos) checkAction(ctx context.Context, r *runView) {
	var a struct {
		Status    string `json:"status"`
		Actioners []any  `json:"actioners"`
	}
	id := actionOf(r)
	if err := ch.api.get(ctx, "/team/"+chaosTeam+"/action/"+id, &a); err != nil {
		ch.rep.problem("run %s: its action %s: %v", r.ID, id, err)
		return
	}
	if a.Status != "approved" || len(a.Actioners) != 1 {
		ch.rep.problem("run %s: its action %s is %s with %d actioners, want approved by 1", r.ID, id, a.Status, len(a.Actioners))
	}
}

// checkScripts checks that each script task of r succeeded having run exactly once, as
// the script itself recorded.
func (ch *chaos) checkScripts(r *runView) {
	for _, t := range r.Tasks {
		if t.Type != "script" {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(ch.cfg.Dir, t.ID))
		n := strings.Count(string(raw), "once")
		ch.rep.Executions += n
		if err != nil || n != 1 {
			ch.rep.problem("run %s task %s (%s) executed %d times, want once (status %s: %s)", r.ID, t.Name, t.ID, n, t.Status, t.StatusMessage)
		}
	}
}

// childRuns answers the child runs of chain (trigger task) by parent, read once.
func (ch *chaos) childRuns(ctx context.Context) map[string][]runView {
	if ch.children != nil {
		return ch.children
	}
	ch.children = map[string][]runView{}
	for page := 0; ; page++ {
		var p struct {
			Content []runView `json:"content"`
		}
		if err := ch.api.get(ctx, fmt.Sprintf("/team/%s/workflowrun/query?workflows=chain&triggers=task&limit=1000&page=%d", chaosTeam, page), &p); err != nil {
			ch.rep.problem("child runs: %v", err)
			return ch.children
		}
		for _, c := range p.Content {
			ch.children[c.ParentRun] = append(ch.children[c.ParentRun], c)
		}
		if len(p.Content) < 1000 {
			return ch.children
		}
	}
}

// checkChild checks parent run r's child: one run of chain, succeeded, its parent r.
func (ch *chaos) checkChild(ctx context.Context, r *runView) {
	children := ch.childRuns(ctx)[r.ID]
	if len(children) != 1 {
		ch.rep.problem("run %s has %d child runs, want 1", r.ID, len(children))
		return
	}
	ch.rep.ChildRuns++
	var child runView
	if err := ch.api.get(ctx, "/team/"+chaosTeam+"/workflowrun/"+children[0].ID, &child); err != nil {
		ch.rep.problem("child run %s: %v", children[0].ID, err)
		return
	}
	if child.Status != "succeeded" {
		ch.rep.problem("child run %s of %s ended %s: %s", child.ID, r.ID, child.Status, child.StatusMessage)
	}
	ch.checkScripts(&child)
}

// checkSchedule checks that the schedule made one run per second from its first fire to
// cut, each fire's run found by the fire's idempotency key (<scheduleId>@<fireTime>), which
// the runs service keeps in its database, and that every run of tick is a fire's. Fires
// late from the kills are waited for, as a user waits; those after cut are not checked.
func (ch *chaos) checkSchedule(ctx context.Context, s schedule, cut time.Time) {
	first := s.created.Truncate(time.Second).Add(time.Second)
	var problems []string
	var runs map[string]runView
	var fires map[time.Time]string
	// Fires come late after kills, and their runs end later still: wait for them.
	err := poll(ctx, func() error {
		var err error
		if runs, err = ch.tickRuns(ctx); err != nil {
			return err
		}
		if fires, err = ch.fires(ctx, s.id); err != nil {
			return err
		}
		problems = problems[:0]
		for at := first; !at.After(cut); at = at.Add(time.Second) {
			run, ok := fires[at]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("schedule: no fire of %s", at.Format(time.TimeOnly)))
			case runs[run].Status != "succeeded":
				problems = append(problems, fmt.Sprintf("schedule: the fire of %s names run %s, which is %q", at.Format(time.TimeOnly), run, runs[run].Status))
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("%d fires not made", len(problems))
		}
		return nil
	})
	if err != nil {
		ch.rep.problem("schedule: %v", err)
		for _, p := range problems {
			ch.rep.problem("%s", p)
		}
	}
	named := map[string]int{}
	for at, run := range fires {
		if !at.Before(first) && !at.After(cut) {
			ch.rep.Fires++
			named[run]++
		} else if at.Before(first) {
			ch.rep.problem("schedule: a fire of %s, before its first", at.Format(time.TimeOnly))
		}
	}
	for id, r := range runs {
		if n := named[id]; n > 1 {
			ch.rep.problem("schedule: run %s is the run of %d fires", id, n)
		}
		if _, ok := named[id]; ok {
			ch.rep.ScheduledRuns++
			continue
		}
		fired := false
		for _, run := range fires {
			fired = fired || run == id
		}
		if !fired {
			ch.rep.problem("schedule: run %s of tick, made at %s, is no fire's", id, r.Created.Format(time.TimeOnly))
		}
	}
}

// tickRuns answers the runs of tick, by id.
func (ch *chaos) tickRuns(ctx context.Context) (map[string]runView, error) {
	out := map[string]runView{}
	for page := 0; ; page++ {
		var p struct {
			Content []runView `json:"content"`
		}
		if err := ch.api.get(ctx, fmt.Sprintf("/team/%s/workflowrun/query?workflows=tick&limit=1000&page=%d", chaosTeam, page), &p); err != nil {
			return nil, err
		}
		for _, r := range p.Content {
			out[r.ID] = r
		}
		if len(p.Content) < 1000 {
			return out, nil
		}
	}
}

// fires reads the schedule's fires from the runs service's idempotency keys: the run of
// each fire time.
func (ch *chaos) fires(ctx context.Context, scheduleID string) (map[time.Time]string, error) {
	client, err := mongox.Connect(ctx, ch.c.StoreURI)
	if err != nil {
		return nil, err
	}
	defer func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }()
	prefix := chaosTeam + "/tick/" + scheduleID + "@"
	cur, err := client.Database(runsDatabase).Collection("idempotency").Find(ctx, bson.M{"_id": bson.M{"$regex": "^" + regexp.QuoteMeta(prefix)}})
	if err != nil {
		return nil, err
	}
	var keys []struct {
		ID  string `bson:"_id"`
		Run string `bson:"run"`
	}
	if err := cur.All(ctx, &keys); err != nil {
		return nil, err
	}
	out := map[time.Time]string{}
	for _, k := range keys {
		at, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(k.ID, prefix))
		if err != nil {
			return nil, fmt.Errorf("fire key %q: %w", k.ID, err)
		}
		out[at] = k.Run
	}
	return out, nil
}

// runsDatabase is the runs service's database under the default prefix.
const runsDatabase = "baton_runs"

// checkSink checks that the sink got every status event of every run in ids: each run's
// events numbered 1 to the last without a gap, the last its completion.
func (ch *chaos) checkSink(ctx context.Context, ids []string) {
	// Deliveries may trail the runs' ends a little: wait until each run's completion came.
	err := poll(ctx, func() error {
		for _, id := range ids {
			if !ch.sink.completed(id) {
				return fmt.Errorf("no completion event of run %s", id)
			}
		}
		return nil
	})
	if err != nil {
		ch.rep.problem("sink: %v", err)
	}
	for _, id := range ids {
		seqs := ch.sink.seqs(id)
		ok := len(seqs) > 0 && ch.sink.completed(id)
		for i, n := range seqs {
			if n != i+1 {
				ok = false
			}
		}
		if !ok {
			ch.rep.problem("sink: run %s's events came numbered %v (completed: %t)", id, seqs, ch.sink.completed(id))
			continue
		}
		ch.rep.SunkRuns++
	}
	ch.rep.Sunk = ch.sink.count()
}

// sink is the HTTP server standing for an event sink: it keeps every status event, once
// per id, by run.
type sink struct {
	url string
	srv *http.Server

	mu   sync.Mutex
	seen map[string]bool
	// byRun holds each run's events' numbers (runseq) and whether its completion came.
	byRun map[string]*sunkRun
}

type sunkRun struct {
	seqs      []int
	completed bool
}

func newSink() (*sink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sink{url: "http://" + ln.Addr().String() + "/events", seen: map[string]bool{}, byRun: map[string]*sunkRun{}}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *sink) close() { _ = s.srv.Close() }

func (s *sink) serve(w http.ResponseWriter, r *http.Request) {
	var e struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Subject string `json:"subject"`
		RunSeq  any    `json:"runseq"`
	}
	if err := json.NewDecoder(r.Body).Decode(&e); err != nil || e.ID == "" {
		http.Error(w, "want a CloudEvent in structured mode", http.StatusBadRequest)
		return
	}
	// The subject is /workflowrun/<id>/status/<status>.
	parts := strings.Split(strings.TrimPrefix(e.Subject, "/"), "/")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[e.ID] || len(parts) < 2 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.seen[e.ID] = true
	run := s.byRun[parts[1]]
	if run == nil {
		run = &sunkRun{}
		s.byRun[parts[1]] = run
	}
	var seq int
	_, _ = fmt.Sscan(fmt.Sprint(e.RunSeq), &seq)
	run.seqs = append(run.seqs, seq)
	if e.Type == "io.baton.event.status.workflowrun" && strings.HasSuffix(e.ID, "/completed") {
		run.completed = true
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}

func (s *sink) completed(run string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.byRun[run]
	return r != nil && r.completed
}

// seqs answers run's events' numbers, sorted.
func (s *sink) seqs(run string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.byRun[run]
	if r == nil {
		return nil
	}
	out := slices.Clone(r.seqs)
	slices.Sort(out)
	return out
}
