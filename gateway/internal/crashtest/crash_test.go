// Package crashtest kills the engine's processes at random points while runs go through
// it, and checks that every run still ends right, with each task executed exactly once and
// each decision, callback and lock applied once.
package crashtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runner"
	"github.com/baton-flow/baton/services/runs"
)

// TestMain runs the tests, each exchange with the runs service checked against the
// published contract, and reports how many were.
func TestMain(m *testing.M) { testkit.Main(m, contract.Report) }

const key = "crash-test-service-key-0123456789"

// httpClient lets go of idle connections before the services' read timeout answers them.
var httpClient = &http.Client{Transport: &http.Transport{IdleConnTimeout: 10 * time.Second}}

// gate stands for a process's link to the broker: once the process is dead nothing more
// leaves it, not even what a graceful shutdown would still send.
type gate struct {
	p    *kafkax.Producer
	dead atomic.Bool
}

var errDead = errors.New("the process is dead")

func (g *gate) Publish(ctx context.Context, topic, key string, e event.Event) error {
	if g.dead.Load() {
		return errDead
	}
	return g.p.Publish(ctx, topic, key, e)
}

func (g *gate) PublishMany(ctx context.Context, topic string, msgs ...kafkax.Message) error {
	if g.dead.Load() {
		return errDead
	}
	return g.p.PublishMany(ctx, topic, msgs...)
}

// process is one running service instance that can be killed.
type process struct {
	name   string
	url    string
	gate   *gate
	cancel context.CancelFunc
	done   chan struct{}
	app    *fiber.App
}

// kill stops the process without a graceful shutdown: its broker link dies first, then
// its context, its listener and its connections.
func (p *process) kill() {
	p.gate.dead.Store(true)
	p.cancel()
	if p.app != nil {
		_ = p.app.ShutdownWithTimeout(0)
	}
	<-p.done
}

type cluster struct {
	t *testing.T
	// alone runs one runs replica on a SQLite file of its own, as standalone mode does;
	// otherwise two share the MongoDB database.
	alone bool
	// runsDB is the runs replica's SQLite file when it is alone, as standalone mode gives
	// it one; empty keeps the runs in the shared MongoDB (db).
	runsDB   string
	db       *mongo.Database
	kafka    kafkax.Config
	producer *kafkax.Producer
	signer   *auth.Signer
	static   *registry.Static
	defs     defs
	workDirs []string
	log      *slog.Logger
	// logs keeps the services' log when it is not printed (BATON_CRASH_LOG), for a run
	// left stuck to show what was logged of it.
	logs *memLog
	// client asks the runs replicas, checking each exchange against the contract.
	client *http.Client

	mu      sync.Mutex
	runs    []*process
	runners []*process
	// kills says which process died when, for a failure to be read against.
	kills []string
}

// logKill records that process name has just died.
func (c *cluster) logKill(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kills = append(c.kills, time.Now().Format(time.StampMilli)+" "+name)
}

// defs are the test's workflows, by name.
type defs map[string]runs.Definition

func (d defs) Snapshot(_ context.Context, team, name string, _ int) (*runs.Definition, error) {
	def, ok := d[name]
	if !ok {
		return nil, apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found.", name)
	}
	def.Team, def.Version = team, 1
	return &def, nil
}

type contexts struct{}

func (contexts) RunContext(context.Context, string) (runs.TeamContext, error) {
	return runs.TeamContext{MaxMonthly: 1_000_000, MaxDuration: 60, MaxConcurrent: 1000, TaskDefaultTimeout: 10}, nil
}

type noCatalogue struct{}

func (noCatalogue) TaskSpec(context.Context, string, int) (*runs.Spec, int, error) {
	return nil, 0, apperr.New(apperr.TaskNotFound, "no catalogue here")
}

func (c *cluster) startRuns(i int) *process {
	ctx, cancel := context.WithCancel(context.Background())
	g := &gate{p: c.producer}
	// The product's lease (30 s): a restarted runner follows its steps without it, and a
	// shorter one turns a live runner that a loaded machine kept silent into a lost one, whose
	// step then runs again as at-least-once delivery allows, which this test counts as a failure.
	replica := fmt.Sprintf("runs-%d-%d", i, rand.Int())
	svc, err := runs.New(ctx, runs.Config{
		GroupID: c.kafka.TopicPrefix + "runs", Replica: replica,
		RunnerLease: 30 * time.Second, ReplicaTimeout: 5 * time.Second, Reconcile: 200 * time.Millisecond,
		SecretKey: secretKey, DatabaseURL: c.runsDatabaseURL(),
	}, runs.Deps{DB: c.db, Kafka: c.kafka, Publisher: g, Signer: c.signer, Logger: c.log,
		Definitions: c.defs, Catalogue: noCatalogue{}, Contexts: contexts{}})
	require.NoError(c.t, err)
	app := httpx.NewApp(httpx.Config{Name: "runs", Logger: c.log, NoTracing: true})
	svc.Routes(app)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(c.t, err)
	p := &process{name: replica, url: "http://" + ln.Addr().String(), gate: g, cancel: cancel,
		done: make(chan struct{}), app: app}
	var wg sync.WaitGroup
	wg.Go(func() { _ = app.Listener(ln) })
	wg.Go(func() { _ = svc.Run(ctx) })
	go func() {
		wg.Wait()
		close(p.done)
	}()
	return p
}

// secretKey is the key the runs replicas and the runners share.
const secretKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

func (c *cluster) startRunner(i int) *process {
	ctx, cancel := context.WithCancel(context.Background())
	g := &gate{p: c.producer}
	svc, err := runner.New(ctx, runner.Config{
		GroupID: c.kafka.TopicPrefix + "runner", ID: fmt.Sprintf("runner-%d-%d", i, rand.Int()),
		WorkDir: c.workDirs[i], Heartbeat: 500 * time.Millisecond, Concurrency: 16, SecretKey: secretKey,
	}, runner.Deps{Kafka: c.kafka, Publisher: g, Resolver: c.static, Signer: c.signer, Logger: c.log})
	require.NoError(c.t, err)
	p := &process{name: fmt.Sprintf("runner-%d", i), gate: g, cancel: cancel, done: make(chan struct{})}
	go func() {
		_ = svc.Run(ctx)
		close(p.done)
	}()
	return p
}

// publish tells the runners where the live runs replicas are.
func (c *cluster) publish() {
	var urls []string
	for _, p := range c.runs {
		if p != nil {
			urls = append(urls, p.url)
		}
	}
	c.static.Set("runs", urls...)
}

func (c *cluster) runsURL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var live []string
	for _, p := range c.runs {
		if p != nil {
			live = append(live, p.url)
		}
	}
	if len(live) == 0 {
		return ""
	}
	return live[rand.IntN(len(live))]
}

// submit submits a run of workflow with params to any live replica, again with the same
// key until one answers.
func (c *cluster) submit(ctx context.Context, workflow, key string, params map[string]any) (string, error) {
	req := map[string]any{"idempotencyKey": key}
	if params != nil {
		req["params"] = params
	}
	body, _ := json.Marshal(req)
	for ctx.Err() == nil {
		base := c.runsURL()
		if base == "" {
			pause(20 * time.Millisecond)
			continue
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v2/team/crash/workflow/"+workflow+"/submit?start=true", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		_ = c.signer.SetHeaders(auth.Principal{Type: auth.TypeUser, ID: "u", Name: "u", Roles: []string{auth.RoleAdmin}}, req.Header.Set)
		if id, ok := c.trySubmit(req); ok {
			return id, nil
		}
		// Not at once again: 25 submitters spinning on refused or failed calls would take
		// the machine from the replicas they wait for.
		pause(20 * time.Millisecond)
	}
	return "", ctx.Err()
}

// trySubmit sends one submit; ok when the replica answered with the run.
func (c *cluster) trySubmit(req *http.Request) (id string, ok bool) {
	res, err := c.client.Do(req)
	if err != nil {
		return "", false
	}
	raw, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusCreated && res.StatusCode != http.StatusOK {
		return "", false
	}
	var run struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &run); err != nil || run.ID == "" {
		return "", false
	}
	return run.ID, true
}

// The crash test: 200 concurrent runs of a workflow with script, sleep and inline tasks,
// a quarter of them with gate tasks too, while runs replicas and runners are killed at
// random points and restarted. Every run must succeed with each script task executed
// exactly once as the task sees it (a counter file per task run gets one line per
// execution), and each gate must have ended once: its approval decided by the votes sent,
// its callback taken, its lock held by one run at a time (gates_test.go).
func TestCrashSafety(t *testing.T) {
	crashSafety(t, false)
}

// TestCrashSafetyAlone is TestCrashSafety with the one runs replica of standalone mode, on
// a SQLite file of its own, killed and restarted as the other.
func TestCrashSafetyAlone(t *testing.T) {
	crashSafety(t, true)
}

func crashSafety(t *testing.T, alone bool) {
	if os.Getenv("BATON_CRASH_TEST") == "" {
		// make test runs it on its own, once the other tests are done: it wants the machine.
		t.Skip("set BATON_CRASH_TEST=1 to kill and restart the engine's processes under load (about 80 s)")
	}
	ctx := context.Background()
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 4, events.TaskDispatch, events.TaskUpdates, events.RunEvents, events.RunEventsRecorded))
	producer := kafkax.NewProducer(kcfg)
	t.Cleanup(func() { _ = producer.Close() })
	signer, err := auth.NewSigner([]byte(key))
	require.NoError(t, err)
	counters := t.TempDir()

	script := func(name string) map[string]any {
		return map[string]any{"name": name, "type": "script", "retries": 8, "retryDelay": 0,
			// It lasts a while on either side of its effect, so that kills catch steps
			// before it and after it.
			"params": []map[string]any{{"name": "script", "value": "sleep 0.1; echo once >> " + counters + "/$(context.params.taskrun-ref); sleep 0.1"}}}
	}
	dep := func(names ...string) []map[string]any {
		var out []map[string]any
		for _, n := range names {
			out = append(out, map[string]any{"taskRef": n})
		}
		return out
	}
	a, b, e := script("a"), script("b"), script("e")
	a["dependencies"], e["dependencies"] = dep("start"), dep("start")
	b["dependencies"] = dep("nap")
	// flow is the scripts; gated is the same with the gates beside them, which its mark
	// waits for too.
	tasks := func(gates bool) []map[string]any {
		mark := dep("b", "e")
		if gates {
			mark = dep("b", "e", unlockTask)
		}
		out := []map[string]any{
			{"name": "start", "type": "start"}, a, e,
			{"name": "nap", "type": "sleep", "params": []map[string]any{{"name": "duration", "value": 150}}, "dependencies": dep("a")},
			b,
			{"name": "mark", "type": "setwfproperty", "params": []map[string]any{{"name": "output", "value": "done"}, {"name": "value", "value": "yes"}},
				"dependencies": mark},
			{"name": "end", "type": "end", "dependencies": dep("mark")},
		}
		if gates {
			out = append(out, gateTasks()...)
		}
		return out
	}
	workflows := defs{}
	for name, body := range map[string]map[string]any{
		"flow":  {"name": "flow", "status": "active", "tasks": tasks(false)},
		"gated": {"name": "gated", "status": "active", "tasks": tasks(true), "params": []map[string]any{{"name": "key", "type": "text", "required": true}}},
	} {
		raw, _ := json.Marshal(body)
		var def runs.Definition
		require.NoError(t, json.Unmarshal(raw, &def))
		workflows[name] = def
	}

	c := &cluster{t: t, alone: alone, db: client.Database(testkit.Database(t)), kafka: kcfg, producer: producer, signer: signer,
		static: registry.NewStatic(nil), defs: workflows, workDirs: []string{t.TempDir(), t.TempDir()},
		logs: &memLog{}, client: contract.Client(t, httpClient, contract.BehindGateway())}
	if alone {
		c.runsDB = filepath.Join(t.TempDir(), "runs.db")
	}
	c.log = testLogger(c.logs)
	sinks := newSinks(t)
	c.startIntegrations(sinks)
	c.runs = []*process{c.startRuns(0)}
	if !alone {
		c.runs = append(c.runs, c.startRuns(1))
	}
	t.Cleanup(func() {
		if t.Failed() {
			c.mu.Lock()
			defer c.mu.Unlock()
			t.Logf("kills:\n%s", strings.Join(c.kills, "\n"))
		}
	})
	c.runners = []*process{c.startRunner(0), c.startRunner(1)}
	c.publish()
	t.Cleanup(func() {
		for _, p := range append(c.runs, c.runners...) {
			if p != nil {
				p.kill()
			}
		}
	})

	// Chaos: kill one process at a random moment, restart it a little later, again and
	// again, while the runs go through. With two runs replicas one is always up, so
	// submits get an answer, and the other's runs are taken over while it is down; a
	// replica alone leaves submits waiting until it is back.
	chaosCtx, stopChaos := context.WithCancel(ctx)
	var runsKills, runnerKills atomic.Int64
	var chaos sync.WaitGroup
	chaos.Go(func() {
		for n := 0; chaosCtx.Err() == nil && os.Getenv("BATON_CRASH_NO_KILLS") == ""; n++ {
			select {
			case <-chaosCtx.Done():
				return
			case <-time.After(time.Duration(100+rand.IntN(300)) * time.Millisecond):
			}
			// The two kinds of process die in turn, each at a random moment.
			if n%2 == 0 {
				i := rand.IntN(len(c.runs))
				c.mu.Lock()
				victim := c.runs[i]
				c.runs[i] = nil
				c.publish()
				c.mu.Unlock()
				victim.kill()
				c.logKill(victim.name)
				runsKills.Add(1)
				pause(time.Duration(100+rand.IntN(400)) * time.Millisecond)
				c.mu.Lock()
				c.runs[i] = c.startRuns(i)
				c.publish()
				c.mu.Unlock()
			} else {
				i := rand.IntN(2)
				c.runners[i].kill()
				c.logKill(c.runners[i].name)
				runnerKills.Add(1)
				pause(time.Duration(50+rand.IntN(200)) * time.Millisecond)
				c.runners[i] = c.startRunner(i)
			}
		}
	})

	total := 200
	if n, err := strconv.Atoi(os.Getenv("BATON_CRASH_RUNS")); err == nil {
		total = n
	}
	ids := make([]string, total)
	// The gates are driven until every run has completed.
	gatesCtx, stopGates := context.WithCancel(ctx)
	g := newGates(gatesCtx, t, c)
	g.wg.Go(g.watch)
	defer func() {
		stopGates()
		g.wg.Wait()
	}()
	began := time.Now()
	// A bound on submits that get no answer, not a speed goal: on a machine running other
	// test binaries too, 200 submits under kills took from one to over two minutes.
	submitCtx, cancelSubmit := context.WithTimeout(ctx, 8*time.Minute)
	defer cancelSubmit()
	var submits sync.WaitGroup
	sem := make(chan struct{}, 25)
	for i := range total {
		sem <- struct{}{}
		submits.Go(func() {
			defer func() { <-sem }()
			workflow, params := "flow", map[string]any(nil)
			if gated(i) {
				workflow, params = "gated", map[string]any{"key": lockKey(i)}
			}
			id, err := c.submit(submitCtx, workflow, fmt.Sprintf("run-%d", i), params)
			assert.NoError(t, err)
			ids[i] = id
			if err == nil && gated(i) {
				g.submitted(i, id)
			}
		})
	}
	submits.Wait()
	t.Logf("%d runs submitted in %s", total, time.Since(began).Round(time.Millisecond))
	// Keep killing for a while after the last submit, then let everything settle.
	pause(2 * time.Second)
	stopChaos()
	chaos.Wait()
	t.Logf("%d runs replicas and %d runners killed", runsKills.Load(), runnerKills.Load())
	if os.Getenv("BATON_CRASH_NO_KILLS") == "" {
		require.Positive(t, runsKills.Load(), "a runs replica was killed while runs went through")
		require.Positive(t, runnerKills.Load(), "a runner was killed while runs went through")
	}

	// Every run ends, and succeeds.
	runs := map[string]map[string]any{}
	// A bound on a stuck run, far above the time they take, not a speed goal.
	settling := time.Now()
	deadline := settling.Add(8 * time.Minute)
	for len(runs) < total {
		for _, id := range ids {
			if _, ok := runs[id]; ok {
				continue
			}
			if run, ok := c.get(ctx, id); ok && run["phase"] == "completed" {
				runs[id] = run
			}
		}
		if time.Now().After(deadline) {
			var stuck []string
			for _, id := range ids {
				if _, ok := runs[id]; ok {
					continue
				}
				stuck = append(stuck, id)
				run, _ := c.get(ctx, id)
				t.Logf("not completed: %s %v/%v", id, run["status"], run["phase"])
				tasks, _ := run["tasks"].([]any)
				for _, task := range tasks {
					tr := task.(map[string]any)
					t.Logf("   %v %v attempt=%v msg=%v", tr["name"], tr["status"], tr["attempt"], tr["statusMessage"])
				}
			}
			g.dumpGates(ctx, stuck)
			t.Logf("the services' log of the runs not completed, and every warning:\n%s", c.logs.about(stuck))
			require.FailNow(t, "runs did not all complete", "%d of %d", len(runs), total)
		}
		pause(100 * time.Millisecond)
	}
	t.Logf("every run completed %s after the kills stopped", time.Since(settling).Round(time.Millisecond))
	stopGates()
	g.wg.Wait()
	for id, run := range runs {
		assert.Equal(t, "succeeded", run["status"], "run %s: %v", id, run["statusMessage"])
	}
	count, ok := c.count(ctx)
	require.True(t, ok)
	assert.EqualValues(t, total, count["all"], "one run per idempotency key")

	// Each script task of each run executed exactly once.
	for _, id := range ids {
		for _, task := range []int{1, 2, 4} {
			raw, err := os.ReadFile(filepath.Join(counters, fmt.Sprintf("%s.%d", id, task)))
			if !assert.NoError(t, err, "run %s task %d never executed", id, task) {
				continue
			}
			if !assert.Equal(t, 1, strings.Count(string(raw), "once"), "run %s task %d executions", id, task) {
				tr := runs[id]["tasks"].([]any)[task].(map[string]any)
				t.Logf("task run: attempt=%v status=%v msg=%v", tr["attempt"], tr["status"], tr["statusMessage"])
			}
		}
	}

	g.checkGates(ctx, ids, runs)
	// Every status change stored reached every sink, in order per run.
	sinks.checkSinks(t, ids)

	// Nothing is left owed: no run in flight, no concurrency slot held.
	settled := assert.Eventually(t, func() bool {
		n, err := c.countInFlight(ctx)
		return err == nil && n == 0
	}, 30*time.Second, 100*time.Millisecond, "runs left in flight")
	if !settled {
		left := c.leftInFlight(ctx)
		t.Logf("the services' log of the runs left in flight, and every warning:\n%s", c.logs.about(left))
		require.FailNow(t, "runs left in flight", "%d", len(left))
	}
	if alone {
		return // its slots are in its SQLite file: they are looked at on MongoDB
	}
	var slots struct {
		N int `bson:"n"`
	}
	require.NoError(t, c.db.Collection("counters").FindOne(ctx, bson.M{"_id": "slots/crash"}).Decode(&slots))
	assert.Equal(t, 0, slots.N, "slots left held")
}

// leftInFlight logs the runs still in flight, with their owner, phase and
// wake time, and answers their ids.
func (c *cluster) leftInFlight(ctx context.Context) []string {
	left, err := c.findInFlight(ctx)
	if err != nil {
		c.t.Logf("runs in flight: %v", err)
	}
	ids := make([]string, len(left))
	for i, r := range left {
		ids[i] = r.ID
		c.t.Logf("left in flight: run %s owner=%s phase=%s wakeAt=%s", r.ID, r.Owner, r.Phase, r.WakeAt.Format(time.RFC3339Nano))
	}
	return ids
}

// pause waits d: the chaos's own rhythm, not a wait for a condition.
func pause(d time.Duration) { <-time.After(d) }

// testLogger prints the services' log with BATON_CRASH_LOG, and keeps it in logs otherwise.
func testLogger(logs *memLog) *slog.Logger {
	var w io.Writer = logs
	if os.Getenv("BATON_CRASH_LOG") != "" {
		w = os.Stderr
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// memLog keeps log records in memory, a few thousand in a test of 200 runs, up to
// maxLogRecords.
type memLog struct {
	mu      sync.Mutex
	records []string
}

const maxLogRecords = 1 << 20

// Write takes one record: a slog handler writes each with one call.
func (m *memLog) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.records) < maxLogRecords {
		m.records = append(m.records, string(p))
	}
	return len(p), nil
}

// about returns the records that name any of ids (a run, or its task runs), and every
// warning and error.
func (m *memLog) about(ids []string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var b strings.Builder
	for _, r := range m.records {
		if strings.Contains(r, "level=WARN") || strings.Contains(r, "level=ERROR") ||
			slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(r, id) }) {
			b.WriteString(r)
		}
	}
	return b.String()
}

// call asks a live runs replica; ok is false when none answered 200.
func (c *cluster) call(ctx context.Context, path string) (map[string]any, bool) {
	base := c.runsURL()
	if base == "" {
		return nil, false
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	_ = c.signer.SetHeaders(auth.Principal{Type: auth.TypeUser, ID: "u", Name: "u", Roles: []string{auth.RoleAdmin}}, req.Header.Set)
	res, err := c.client.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	var out map[string]any
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&out) != nil {
		return nil, false
	}
	return out, true
}

func (c *cluster) get(ctx context.Context, id string) (map[string]any, bool) {
	return c.call(ctx, "/api/v2/team/crash/workflowrun/"+id)
}

func (c *cluster) count(ctx context.Context) (map[string]any, bool) {
	out, ok := c.call(ctx, "/api/v2/team/crash/workflowrun/count")
	if !ok {
		return nil, false
	}
	status, ok := out["status"].(map[string]any)
	return status, ok
}

func TestMemLogAbout(t *testing.T) {
	t.Parallel()
	if os.Getenv("BATON_CRASH_LOG") != "" {
		t.Skip("the log goes to stderr")
	}
	m := &memLog{}
	log := testLogger(m)
	log.Debug("took over run", "run", "r1")
	log.Info("attempt started", "taskRunId", "r1.3")
	log.Info("attempt started", "taskRunId", "r2.1")
	log.Warn("cannot ask for a lock", "run", "r3")
	got := m.about([]string{"r1"})
	assert.Contains(t, got, "took over run")
	assert.Contains(t, got, "taskRunId=r1.3")
	assert.NotContains(t, got, "r2.1")
	assert.Contains(t, got, "cannot ask for a lock", "warnings are kept whatever run they name")
}
