// Package killtest runs replicas of the schedules service as processes against one
// database, kills and restarts them at random while schedules fire every second or so, and
// checks that every planned fire made exactly one run: none missing, none at a time that
// was not planned.
package killtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/host"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/schedules"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/mongostore"
	"github.com/baton-flow/baton/services/schedules/internal/sqlitestore"
)

// Environment variables of the test.
const (
	// envGate runs the test: it lasts about two and a half minutes.
	envGate = "BATON_SCHEDULE_KILL_TEST"
	// envDuration is how long replicas are killed, as a Go duration (default 2m).
	envDuration = "BATON_SCHEDULE_KILL_DURATION"
	// envReplica makes the test binary a replica of the schedules service instead.
	envReplica = "BATON_SCHEDULE_KILL_REPLICA"
)

// TestMain runs the tests, or, in a process the test started, a replica of the schedules
// service: the service's own main (cmd/schedules), on the configuration the test gave it.
func TestMain(m *testing.M) {
	if os.Getenv(envReplica) != "" {
		host.Main(schedules.Name, host.Options{}, schedules.Build)
		os.Exit(0)
	}
	testkit.Main(m)
}

const (
	team       = "ops"
	workflow   = "tick"
	serviceKey = "schedule-kill-test-service-key-0123"
	secretKey  = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	// overdueLimit holds the kills off while a schedule is due longer ago than this, until
	// the replicas have caught up: a fire late by more than domain.OnTime (a minute) is
	// missed, not owed, and with misfirePolicy fireOnce rightly makes no run of its own.
	// Late by this, one more kill (its claims lapsing after the lease, 17 s, and the
	// restart, at most 5 s) still leaves the fire well within the minute.
	overdueLimit = 15 * time.Second
	// settleBound bounds the wait for the fires owed when the kills stop, far above the
	// lease (17 s) after which a dead replica's schedules are taken up.
	settleBound = 2 * time.Minute
	// trapWait is how long a trap waits for a replica to take its step. A replica keeps
	// the schedules it claimed while they fire every second or two, so after the one that
	// held them dies, no step is taken until its claims lapse (the 15 s lease after their
	// due time); a trap set then springs on the replica taking them up.
	trapWait = 20 * time.Second
)

// The schedules fired, every one through the service's own code (app.Schedules.Create
// stores them; the replicas' schedulers fire them). Their overlap policies make each fire
// one run: allow, and cancelOther, which cancels the run before. skip and bufferOne make
// none or fewer and are left out.
var fleet = []struct {
	n          int
	cron, zone string
	overlap    domain.OverlapPolicy
	misfire    domain.MisfirePolicy
	catchup    time.Duration
	params     map[string]any
	labels     map[string]string
}{
	{n: 8, cron: "* * * * * *", zone: "UTC"},
	{n: 2, cron: "* * * * * *", zone: "Europe/Paris", overlap: domain.OverlapCancelOther},
	{n: 4, cron: "*/2 * * * * *", zone: "Asia/Tokyo", misfire: domain.MisfireFireAll, catchup: time.Hour},
	{n: 4, cron: "@every 3s", zone: "UTC", params: map[string]any{"env": "prod"}, labels: map[string]string{"tier": "1"}},
	{n: 2, cron: "*/5 * * * * *", zone: "America/New_York"},
}

// TestSchedulesUnderKills checks the scheduler's promise, one run per planned fire however
// many replicas run and however they die, on the service as it is deployed: two replicas,
// each a process of its own (this binary running the service's main, see TestMain), on one
// database, calling the runs stand-in found through BATON_SERVICE_URLS. A replica dies of
// SIGKILL: no deferred call, no graceful shutdown, no write let through after its death;
// what it had sent before is all the others see of it.
//
// About twenty schedules fire every one to five seconds, some fourteen fires a second. For
// two minutes (BATON_SCHEDULE_KILL_DURATION), every one to eight seconds a replica is
// killed and started again zero to five seconds later, so that at times none runs. Four
// kills in five are aimed at a step of the firing, before it takes effect or after it did
// but before the replica hears so: claiming schedules, storing the fires it planned as
// pending, submitting a fire, storing the schedule moved on. A proxy in front of the
// database (dbLink) and the runs stand-in see those steps go by and kill the replica there.
// The rest come at random moments.
//
// A replica that dies holding claims leaves their schedules until its lease lapses, 15 s
// after their due time; kills in a row could then make a fire later than domain.OnTime,
// after which misfirePolicy fireOnce rightly makes one run for the fires missed. So kills
// are held off while a schedule is overdue by more than overdueLimit: kills make fires
// late, and the test checks that late fires are all still made, once.
//
// Then the kills stop, every replica runs, and once the store shows each fire up to the
// cut-off made, the runs stand-in's submits are compared with the plans computed here with
// robfig/cron: for each schedule, the fires submitted up to the cut-off are exactly its
// planned fires since its first, and none, before or after it, came at a time that was not
// planned. A fire submitted again after a kill is expected and harmless: its key makes it
// the same run, as in the runs service; the test counts them.
func TestSchedulesUnderKills(t *testing.T) {
	underKills(t, onMongo)
}

// TestSchedulesUnderKillsSQLite is TestSchedulesUnderKills on the store of a single-process
// Baton: one replica, on a SQLite file of its own (BATON_SCHEDULES_DATABASE_URL), killed
// and started again, at times none running. Its steps on the database are not seen (no
// proxy stands in front of a file): the kills aimed at a step are aimed at its submits,
// the others come at random moments. What it writes it writes through its file's writer,
// which answers once the commit is on disk; what a kill cuts short is not written at all.
func TestSchedulesUnderKillsSQLite(t *testing.T) {
	underKills(t, onSQLite)
}

// storeKind is where the replicas keep the schedules.
type storeKind struct {
	// replicas run at once, each in a slot of its own.
	replicas int
	// sqlite gives them one SQLite file, rather than one MongoDB database.
	sqlite bool
	// phases are the steps of the firing the kills can be aimed at.
	phases []phase
}

var (
	onMongo  = storeKind{replicas: 2, phases: []phase{phaseClaim, phasePlan, phaseSubmit, phaseStore}}
	onSQLite = storeKind{replicas: 1, sqlite: true, phases: []phase{phaseSubmit}}
)

func underKills(t *testing.T, kind storeKind) {
	if os.Getenv(envGate) == "" {
		// make test runs it on its own, after the other tests, so that how late the fires
		// are depends on the kills rather than on what else the machine runs.
		t.Skip("set " + envGate + "=1 to kill and restart schedules replicas as schedules fire (about 140 s)")
	}
	kills := 2 * time.Minute
	if v := os.Getenv(envDuration); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, envDuration)
		kills = d
	}
	ctx := context.Background()
	bin, err := os.Executable()
	require.NoError(t, err)
	mongoURI := testkit.MongoURI(t)
	client, err := mongox.Connect(ctx, mongoURI)
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	prefix := testkit.Database(t) + "_"
	box, err := secrets.FromString(secretKey)
	require.NoError(t, err)
	var store app.Store
	var storeEnv []string
	if kind.sqlite {
		// Opened before any replica starts: each opening lets go of the claims it finds.
		file := fmt.Sprintf("%s/%s.db", t.TempDir(), schedules.Name)
		s, err := sqlitestore.Open(ctx, file, box)
		require.NoError(t, err)
		t.Cleanup(func() { _ = s.Close() })
		store, storeEnv = s, []string{schedules.DatabaseURLEnv + "=sqlite:" + file}
	} else {
		s := mongostore.New(client.Database(prefix+schedules.Name), box)
		require.NoError(t, s.EnsureIndexes(ctx))
		store = s
	}
	signer, err := auth.NewSigner([]byte(serviceKey))
	require.NoError(t, err)

	c := &cluster{t: t, bin: bin, procs: make([]*proc, kind.replicas), gens: make([]int, kind.replicas), phases: kind.phases,
		sprung: make(chan int, 1), killsBy: map[string]int{}}
	runs := newRunsStandIn(c, signer)
	srv := httptest.NewServer(runs.routes())
	t.Cleanup(srv.Close)
	upstream, err := url.Parse(mongoURI)
	require.NoError(t, err)
	brokers, topics := strings.Join(testkit.KafkaBrokers(t), ","), testkit.TopicPrefix(t)
	var links []*dbLink
	logDir := t.TempDir()
	for slot := range kind.replicas {
		l, err := newDBLink(c, slot, upstream.Host)
		require.NoError(t, err)
		links = append(links, l)
		f, err := os.OpenFile(fmt.Sprintf("%s/replica-%d.log", logDir, slot), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		require.NoError(t, err)
		c.logs = append(c.logs, f)
	}
	c.env = func(slot, gen int) []string {
		uri := *upstream
		if !kind.sqlite {
			uri.Host = links[slot].addr()
			q := uri.Query()
			q.Set("directConnection", "true") // the proxy's address, whatever the server says of itself
			uri.RawQuery = q.Encode()
		}
		var env []string
		for _, kv := range os.Environ() {
			if !strings.HasPrefix(kv, "BATON_") {
				env = append(env, kv)
			}
		}
		env = append(env, storeEnv...)
		return append(env, envReplica+"=1",
			"BATON_HTTP_ADDR=127.0.0.1:0", "BATON_ADMIN_ADDR="+host.AdminOff, "BATON_LOG_LEVEL=warn",
			"BATON_MONGO_URI="+uri.String(), "BATON_MONGO_DB_PREFIX="+prefix,
			"BATON_KAFKA_BROKERS="+brokers, "BATON_KAFKA_TOPIC_PREFIX="+topics,
			"BATON_SERVICE_KEY="+serviceKey, secrets.EnvKey+"="+secretKey,
			fmt.Sprintf("BATON_SERVICE_URLS=%s=%s/r/%d/%d", "runs", srv.URL, slot, gen))
	}
	t.Cleanup(func() {
		c.stopAll()
		for _, l := range links {
			l.close()
		}
		for _, f := range c.logs {
			_ = f.Close()
		}
		if t.Failed() {
			c.dump()
		}
	})
	for slot := range kind.replicas {
		require.NoError(t, c.start(slot))
	}

	// The schedules, made as the API makes them; the plan of each computed here.
	sch := app.NewSchedules(app.Deps{Store: store, Workflows: triggerOn{},
		NewID: func() string { return bson.NewObjectID().Hex() }})
	admin := auth.WithPrincipal(ctx, auth.Principal{Type: auth.TypeUser, ID: "u1", Name: "Ada", Person: "u1", Roles: []string{auth.RoleAdmin}})
	plans := map[string]plan{}
	for _, f := range fleet {
		for i := range f.n {
			s, err := sch.Create(admin, team, domain.Schedule{Name: fmt.Sprintf("%s in %s #%d", f.cron, f.zone, i), Workflow: workflow,
				Cron: f.cron, Timezone: f.zone, Overlap: f.overlap, Misfire: f.misfire, CatchupWindow: f.catchup,
				Params: f.params, Labels: f.labels})
			require.NoError(t, err)
			p := newPlan(t, f.cron, f.zone, s.Created)
			require.Equal(t, p.first, s.Next.UTC(), "%s: the first fire, by robfig/cron and by the service", s.Name)
			plans[s.ID] = p
		}
	}
	began := time.Now()

	// The kills.
	chaosCtx, stopChaos := context.WithTimeout(ctx, kills)
	defer stopChaos()
	var restarts sync.WaitGroup
	overdue := func() bool {
		all, err := store.FindWorkflowSchedules(ctx, team, workflow)
		if err != nil {
			t.Logf("cannot tell whether schedules are overdue: %v", err)
			return false
		}
		return slices.ContainsFunc(all, func(s *domain.Schedule) bool {
			due := s.Due()
			return !due.IsZero() && due.Before(time.Now().Add(-overdueLimit))
		})
	}
	c.chaos(chaosCtx, &restarts, overdue)
	restarts.Wait()
	for slot := range kind.replicas {
		if c.current(slot, 0) == nil {
			require.NoError(t, c.start(slot))
		}
	}
	cutoff := time.Now().Truncate(time.Second)
	t.Logf("kills stopped after %s: every fire up to %s is owed", time.Since(began).Round(time.Second), cutoff.Format(time.TimeOnly))
	c.mu.Lock()
	killed := len(c.kills)
	c.mu.Unlock()
	require.Positive(t, killed, "replicas were killed")

	// Wait for the store to say that every fire up to the cut-off is made: nothing pending
	// up to it, and the last fire made at or after the last planned one.
	settling := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		behind, err := behind(ctx, store, plans, cutoff)
		require.NoError(t, err)
		if len(behind) == 0 {
			break
		}
		if time.Since(settling) > settleBound {
			require.FailNow(t, "fires up to the cut-off were not all made", "%d schedules behind:\n%s",
				len(behind), strings.Join(behind, "\n"))
		}
		<-tick.C
	}
	t.Logf("every fire up to the cut-off made %s after the kills stopped", time.Since(settling).Round(time.Millisecond))
	c.stopAll()

	// Every planned fire made one run, and no run was made for a time that was not planned.
	submits, made, cancels, wrong := runs.recorded()
	assert.Empty(t, wrong, "requests the runs service would have refused")
	first := map[string]time.Time{}
	raw := map[string]int{}
	for _, s := range submits {
		if _, ok := first[s.key]; !ok {
			first[s.key] = s.at
		}
		raw[s.key]++
	}
	assert.Equal(t, len(first), made, "one run per key")
	fired := map[string][]time.Time{}
	for key := range first {
		id, at, ok := parseKey(key)
		if _, known := plans[id]; !ok || !known {
			assert.Fail(t, "a submit under a key of no schedule", key)
			continue
		}
		fired[id] = append(fired[id], at)
	}
	var owed, dups int
	var skews []time.Duration
	for id, p := range plans {
		got := fired[id]
		slices.SortFunc(got, func(a, b time.Time) int { return a.Compare(b) })
		want := p.upTo(cutoff)
		owed += len(want)
		upTo, _ := slices.BinarySearchFunc(got, cutoff.Add(time.Nanosecond), func(a, b time.Time) int { return a.Compare(b) })
		missing, extra := diff(want, got[:upTo])
		assert.Empty(t, missing, "schedule %s: planned fires without a run", id)
		assert.Empty(t, extra, "schedule %s: runs at times that were not planned", id)
		if len(got) > upTo {
			_, later := diff(p.upTo(got[len(got)-1]), got[upTo:])
			assert.Empty(t, later, "schedule %s: runs after the cut-off at times that were not planned", id)
		}
		for _, at := range got[:upTo] {
			key := domain.FireKey(id, at)
			dups += raw[key] - 1
			skews = append(skews, first[key].Sub(at))
		}
	}
	slices.Sort(skews)
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Logf("%d schedules, %d fires planned up to the cut-off, %d submitted under their keys (%d submits in all, "+
		"%d runs made, %d runs cancelled by cancelOther schedules); %d submits again of a fire already submitted, "+
		"absorbed by its key", len(plans), owed, len(skews), len(submits), made, cancels, dups)
	t.Logf("%d kills: %s; %d held off while fires were late", len(c.kills), c.killCounts(), c.heldOff.Load())
	t.Logf("steps taken: %d claims, %d plans stored, %d submits, %d schedules stored with their fires made",
		c.steps[phaseClaim].Load(), c.steps[phasePlan].Load(), c.steps[phaseSubmit].Load(), c.steps[phaseStore].Load())
	t.Logf("no replica running for %s in all, %s at most at once", c.allDown.Round(time.Millisecond), c.maxAllDown.Round(time.Millisecond))
	if len(skews) > 0 {
		t.Logf("a fire's submit after its time: p50 %s, p99 %s, max %s", skews[len(skews)/2].Round(time.Millisecond),
			skews[len(skews)*99/100].Round(time.Millisecond), skews[len(skews)-1].Round(time.Millisecond))
	}
	assert.Empty(t, c.exits, "replicas that ended without being killed")
}

// triggerOn is the workflows service as schedules ask it: the workflow exists and its
// schedule trigger is on.
type triggerOn struct{}

func (triggerOn) Workflow(context.Context, string, string) (app.WorkflowInfo, error) {
	return app.WorkflowInfo{ScheduleEnabled: true}, nil
}

// cronParser reads the dialect (API.md §6) with robfig/cron itself, apart from the
// service's own reading of it.
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// plan is a schedule's planned fires: from its first, after it was made, each the next of
// its expression in its zone.
type plan struct {
	when  cron.Schedule
	loc   *time.Location
	first time.Time
}

func newPlan(t *testing.T, expr, zone string, created time.Time) plan {
	t.Helper()
	when, err := cronParser.Parse(expr)
	require.NoError(t, err)
	loc, err := time.LoadLocation(zone)
	require.NoError(t, err)
	return plan{when: when, loc: loc, first: when.Next(created.In(loc)).UTC()}
}

// upTo answers the planned fires up to t.
func (p plan) upTo(t time.Time) []time.Time {
	var out []time.Time
	for at := p.first; !at.After(t); at = p.when.Next(at.In(p.loc)).UTC() {
		out = append(out, at)
	}
	return out
}

// parseKey reads a fire's key (domain.FireKey).
func parseKey(key string) (id string, at time.Time, ok bool) {
	id, stamp, ok := strings.Cut(key, "@")
	if !ok {
		return "", time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, stamp)
	return id, at.UTC(), err == nil
}

// diff answers what of want got lacks, and what of got want lacks; both sorted.
func diff(want, got []time.Time) (missing, extra []time.Time) {
	in := func(list []time.Time, t time.Time) bool {
		_, ok := slices.BinarySearchFunc(list, t, func(a, b time.Time) int { return a.Compare(b) })
		return ok
	}
	for _, w := range want {
		if !in(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !in(want, g) {
			extra = append(extra, g)
		}
	}
	return missing, extra
}

// behind answers the schedules whose fires up to cutoff the store does not yet show made,
// one line each.
func behind(ctx context.Context, store app.Store, plans map[string]plan, cutoff time.Time) ([]string, error) {
	all, err := store.FindWorkflowSchedules(ctx, team, workflow)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range all {
		want := plans[s.ID].upTo(cutoff)
		if len(want) == 0 {
			continue
		}
		if s.Last.Before(want[len(want)-1]) || len(s.Pending) > 0 && !s.Pending[0].After(cutoff) {
			out = append(out, fmt.Sprintf("%s: last %s, pending %v, next %s, due %s", s.ID,
				s.Last.Format(time.TimeOnly), s.Pending, s.Next.Format(time.TimeOnly), s.Due().Format(time.TimeOnly)))
		}
	}
	return out, nil
}

// phase is a step of a replica's firing at which a kill can be aimed.
type phase int

const (
	phaseNone phase = iota
	// phaseClaim is a replica claiming the schedules due soon (ClaimDue's update).
	phaseClaim
	// phasePlan is a replica storing a schedule's fires as pending, before submitting them.
	phasePlan
	// phaseSubmit is a replica submitting a fire to the runs service.
	phaseSubmit
	// phaseStore is a replica storing a schedule with its fires made.
	phaseStore
)

func (p phase) String() string {
	return [...]string{"-", "claim", "plan", "submit", "store"}[p]
}

// trap is a kill aimed at the next time any replica takes a step: before it takes effect,
// or after it did and before the replica hears so.
type trap struct {
	phase phase
	after bool
}

func (tr trap) String() string {
	if tr.after {
		return "after " + tr.phase.String()
	}
	return "before " + tr.phase.String()
}

// proc is one replica process, the gen-th started in its slot.
type proc struct {
	slot, gen int
	cmd       *exec.Cmd
	exited    chan struct{}
	killed    atomic.Bool
}

// cluster runs the replicas: starts them, kills them.
type cluster struct {
	t    *testing.T
	bin  string
	env  func(slot, gen int) []string
	logs []*os.File
	// phases are the steps kills are aimed at.
	phases []phase
	// armed is the trap set for the next step of any replica, taken is the one sprung;
	// sprung tells the chaos loop which slot it killed (-1: none).
	armed, taken atomic.Pointer[trap]
	sprung       chan int
	// steps counts the steps of each phase the replicas took; heldOff the kills held off.
	steps   [phaseStore + 1]atomic.Int64
	heldOff atomic.Int64

	mu    sync.Mutex
	procs []*proc
	gens  []int
	// downSince is when the last running replica died; zero while one runs.
	downSince           time.Time
	allDown, maxAllDown time.Duration
	// kills say which replica died when, and how; exits the replicas that ended by themselves.
	kills   []string
	killsBy map[string]int
	exits   []string
}

// start starts a replica in slot.
func (c *cluster) start(slot int) error {
	c.mu.Lock()
	c.gens[slot]++
	p := &proc{slot: slot, gen: c.gens[slot], exited: make(chan struct{})}
	c.mu.Unlock()
	p.cmd = exec.Command(c.bin)
	p.cmd.Env = c.env(slot, p.gen)
	p.cmd.Stdout, p.cmd.Stderr = c.logs[slot], c.logs[slot]
	p.cmd.SysProcAttr = dieWithParent()
	started := make(chan error, 1)
	go func() {
		defer close(p.exited)
		// Pdeathsig fires when the thread that started the process exits: keep this one
		// on its thread until the process has ended.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := p.cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := p.cmd.Wait()
		if !p.killed.Load() {
			c.ended(p, err)
		}
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start replica %d: %w", slot, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.procs[slot] = p
	if !c.downSince.IsZero() {
		d := time.Since(c.downSince)
		c.allDown += d
		c.maxAllDown = max(c.maxAllDown, d)
		c.downSince = time.Time{}
	}
	return nil
}

// ended notes a replica that ended by itself.
func (c *cluster) ended(p *proc, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.procs[p.slot] == p {
		c.procs[p.slot] = nil
	}
	c.exits = append(c.exits, fmt.Sprintf("%s replica %d.%d: %v", time.Now().Format(time.StampMilli), p.slot, p.gen, err))
}

// current answers the replica running in slot (of generation gen unless 0), or nil.
func (c *cluster) current(slot, gen int) *proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[slot]
	if p == nil || gen != 0 && p.gen != gen {
		return nil
	}
	return p
}

// kill kills p with SIGKILL, unless it is no longer running, and waits for it to end.
func (c *cluster) kill(p *proc, how string) bool {
	c.mu.Lock()
	if p == nil || c.procs[p.slot] != p {
		c.mu.Unlock()
		return false
	}
	c.procs[p.slot] = nil
	p.killed.Store(true)
	if !slices.ContainsFunc(c.procs, func(q *proc) bool { return q != nil }) {
		c.downSince = time.Now()
	}
	c.kills = append(c.kills, fmt.Sprintf("%s replica %d.%d %s", time.Now().Format(time.StampMilli), p.slot, p.gen, how))
	c.killsBy[how]++
	c.mu.Unlock()
	_ = p.cmd.Process.Kill()
	<-p.exited
	return true
}

// stopAll kills every replica.
func (c *cluster) stopAll() {
	for slot := range c.procs {
		if p := c.current(slot, 0); p != nil {
			p.killed.Store(true)
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
}

// take claims the armed trap when it is aimed at step ph of the running replica p, before
// or after it takes effect.
func (c *cluster) take(p *proc, ph phase, after bool) bool {
	tr := c.armed.Load()
	if p == nil || tr == nil || tr.phase != ph || tr.after != after || c.current(p.slot, p.gen) == nil {
		return false
	}
	if !c.armed.CompareAndSwap(tr, nil) {
		return false
	}
	c.taken.Store(tr)
	return true
}

// spring kills p for the trap taken and tells the chaos loop.
func (c *cluster) spring(p *proc) {
	if c.kill(p, c.taken.Load().String()) {
		c.sprung <- p.slot
		return
	}
	c.sprung <- -1
}

// seen counts a step of phase ph.
func (c *cluster) seen(ph phase) { c.steps[ph].Add(1) }

// unsprung tells the chaos loop that the trap taken killed no one.
func (c *cluster) unsprung() { c.sprung <- -1 }

// chaos kills a replica every one to eight seconds until ctx ends, and has each started
// again zero to five seconds later (restarts); the timers set the load's rhythm, nothing
// waits on them for an outcome. Four kills in five are traps at a step of the firing, the
// eight kinds in a shuffled round, then another, so that a short run meets each of them; the
// fifth comes at a random moment, as does a trap no replica walks into within trapWait.
// While overdue says the replicas are behind, it holds off.
func (c *cluster) chaos(ctx context.Context, restarts *sync.WaitGroup, overdue func() bool) {
	var traps []trap
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second + rand.N(7*time.Second)):
		}
		if overdue() {
			c.heldOff.Add(1)
			continue
		}
		slot := -1
		if rand.IntN(5) > 0 {
			if len(traps) == 0 {
				for _, ph := range c.phases {
					traps = append(traps, trap{phase: ph}, trap{phase: ph, after: true})
				}
				rand.Shuffle(len(traps), func(i, j int) { traps[i], traps[j] = traps[j], traps[i] })
			}
			next := traps[0]
			tr := &next
			traps = traps[1:]
			c.armed.Store(tr)
			heard := false
			select {
			case slot = <-c.sprung:
				heard = true
			case <-time.After(trapWait):
			case <-ctx.Done():
			}
			if !heard && !c.armed.CompareAndSwap(tr, nil) {
				slot = <-c.sprung // taken meanwhile: it is being sprung
			}
			if slot < 0 && overdue() {
				c.heldOff.Add(1)
				continue
			}
		}
		if slot < 0 && ctx.Err() == nil {
			slot = c.killAny()
		}
		if slot >= 0 {
			restarts.Go(func() {
				<-time.After(rand.N(5 * time.Second))
				if err := c.start(slot); err != nil {
					c.t.Error(err)
				}
			})
		}
	}
}

// killAny kills a running replica at random; -1 when none runs.
func (c *cluster) killAny() int {
	c.mu.Lock()
	var running []*proc
	for _, p := range c.procs {
		if p != nil {
			running = append(running, p)
		}
	}
	c.mu.Unlock()
	if len(running) == 0 {
		return -1
	}
	p := running[rand.IntN(len(running))]
	if !c.kill(p, "at random") {
		return -1
	}
	return p.slot
}

// killCounts answers how many kills came at each step; c.mu is held.
func (c *cluster) killCounts() string {
	var out []string
	for how, n := range c.killsBy {
		out = append(out, fmt.Sprintf("%d %s", n, how))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// dump logs the kills and the end of each replica's log, for a failure to be read against.
func (c *cluster) dump() {
	c.mu.Lock()
	c.t.Logf("kills:\n%s", strings.Join(c.kills, "\n"))
	if len(c.exits) > 0 {
		c.t.Logf("replicas that ended by themselves:\n%s", strings.Join(c.exits, "\n"))
	}
	c.mu.Unlock()
	for slot, f := range c.logs {
		raw, err := os.ReadFile(f.Name())
		if err != nil {
			continue
		}
		if len(raw) > 8<<10 {
			raw = raw[len(raw)-8<<10:]
		}
		c.t.Logf("replica %d's log, its end:\n%s", slot, raw)
	}
}
