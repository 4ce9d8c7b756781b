package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/tasktype"
)

// State is a run and its task runs as the engine holds them, with the DAG counters that
// make a step O(edges of the task that ended): per task, how many incoming edges have been
// decided, how many hold and how many hold from an upstream that ran.
type State struct {
	Run   *Run
	Tasks []*TaskRun
	G     *Graph

	arrived, held, liveHeld []int
	left                    int
	// results are the results of ended tasks by task name, for references.
	results map[string]map[string]string
	// secretResults names, by task name, the results of ended tasks that came from a secret.
	secretResults map[string]map[string]bool
	// values is the size of the run's params and results together: its params, its own
	// results and each task's (see MaxRunValuesBytes).
	values int
	// approvals counts the approval tasks waiting for their decision.
	approvals int
}

// NewState indexes a run loaded from storage and rebuilds its counters from the task
// runs' statuses.
func NewState(run *Run, tasks []*TaskRun) (*State, error) {
	if run.Definition == nil {
		return nil, fmt.Errorf("run %s has no definition", run.ID)
	}
	g, err := NewGraph(run.Definition)
	if err != nil {
		return nil, err
	}
	if len(tasks) != len(g.Tasks) {
		return nil, fmt.Errorf("run %s has %d task runs for %d tasks", run.ID, len(tasks), len(g.Tasks))
	}
	n := len(tasks)
	s := &State{Run: run, Tasks: tasks, G: g, arrived: make([]int, n), held: make([]int, n), liveHeld: make([]int, n),
		results: map[string]map[string]string{}, secretResults: map[string]map[string]bool{}}
	s.values = size(run.Params) + size(run.Results)
	for i, t := range tasks {
		// A step that stored its task runs and not its run numbered their events.
		run.EventSeq = max(run.EventSeq, t.EventSeq)
		if !t.Status.Terminal() {
			s.left++
			if t.Status == Waiting && t.Type == tasktype.Approval {
				s.approvals++
			}
			continue
		}
		if len(t.Results) > 0 {
			s.results[t.Name] = t.Results
			s.values += size(t.Results)
		}
		if len(t.SecretResults) > 0 {
			s.secretResults[t.Name] = names(t.SecretResults)
		}
		for _, e := range g.Out[i] {
			s.count(e)
		}
	}
	return s, nil
}

// SecretValues are the values nothing the run shows may hold: those the run knew from
// its start (Context.Secrets: password params, the team's and global ones, the callback
// token) and every result of its ended tasks that came from a secret — a manual form's
// password field, a result a runner found a secret in, a value set from one — since a
// later task may substitute it anywhere: in a script whose log must mask it, in results
// and messages that must not hold it.
func (s *State) SecretValues() []string {
	known := s.Run.Context.Secrets
	if len(s.secretResults) == 0 {
		return known
	}
	out := slices.Clip(known)
	seen := make(map[string]bool, len(known))
	for _, v := range known {
		seen[v] = true
	}
	for _, task := range slices.Sorted(maps.Keys(s.secretResults)) {
		for _, name := range slices.Sorted(maps.Keys(s.secretResults[task])) {
			if v := s.results[task][name]; v != "" && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// Scrub masks, in a text the run shows (a status message, an action's instructions),
// every value of SecretValues.
func (s *State) Scrub(text string) string {
	if text == "" {
		return text
	}
	return ScrubText(text, s.SecretValues())
}

// fits checks that n more bytes of results keep the run's params and results within
// MaxRunValuesBytes.
func (s *State) fits(n int) error {
	if s.values+n > MaxRunValuesBytes {
		return fmt.Errorf("the run's params and results would take %d bytes; a run may hold at most %d", s.values+n, MaxRunValuesBytes)
	}
	return nil
}

// count records that edge e has been decided.
func (s *State) count(e Edge) {
	held, live := s.holds(e)
	s.arrived[e.To]++
	if held {
		s.held[e.To]++
		if live {
			s.liveHeld[e.To]++
		}
	}
}

// holds says whether edge e holds now that its upstream ended, and whether it carries
// reachability (its upstream ran rather than being skipped).
func (s *State) holds(e Edge) (held, live bool) {
	up := s.Tasks[e.From]
	if up.Status == Skipped {
		return e.Exec == Always && e.Decision == nil, false
	}
	switch e.Exec {
	case Success:
		held = up.Status == Succeeded
	case Failure:
		held = up.Status != Succeeded
	default:
		held = true
	}
	if !held || s.G.Tasks[e.From].Type != tasktype.Decision {
		return held, true
	}
	// After a decision, the edges whose patterns match its value hold; when none match,
	// the edges without a pattern (the default branch) do.
	value := up.Decision
	anyMatch := false
	for _, other := range s.G.Out[e.From] {
		if matches(other, value) && up.Status == Succeeded {
			anyMatch = true
			break
		}
	}
	if anyMatch {
		return up.Status == Succeeded && matches(e, value), true
	}
	return e.Decision == nil, true
}

func matches(e Edge, value string) bool {
	for _, re := range e.Decision {
		if re.MatchString(value) {
			return true
		}
	}
	return false
}

// Left is the number of task runs not yet ended.
func (s *State) Left() int { return s.left }

// Machine applies one step to a State and records what changed and what the engine owes
// the world for it. Make one per step.
type Machine struct {
	S   *State
	Now time.Time

	changed    map[int]Status
	runChanged bool
	prevRun    Status
	prevPhase  Phase
	stopped    bool
	eff        Effects
}

// Effects is what a step asks the engine to do once its changes are stored.
type Effects struct {
	// Dispatch lists tasks whose current attempt must be sent to runners or queues.
	Dispatch []int
	// StartChild lists runworkflow tasks whose child run must be submitted.
	StartChild []int
	// Schedule lists runscheduledworkflow tasks whose schedule must be asked for.
	Schedule []int
	// RetryRun asks for an automatic whole-run retry from failure.
	RetryRun bool
	// Actions lists approval and manual tasks whose action must be brought in line with
	// the task: created while it waits, closed once it has ended.
	Actions []int
	// Acquire lists acquirelock tasks asking for their lock, Leave those that stopped
	// waiting for it, Release releaselock tasks whose lock must be let go.
	Acquire, Leave, Release []int
}

// NewMachine starts a step on s at now.
func NewMachine(s *State, now time.Time) *Machine {
	return &Machine{S: s, Now: now.UTC(), changed: map[int]Status{}, prevRun: s.Run.Status, prevPhase: s.Run.Phase}
}

// Changed returns the tasks the step changed, with their statuses before it.
func (m *Machine) Changed() map[int]Status { return m.changed }

// RunChanged reports whether the run document changed, and its status and phase before
// the step.
func (m *Machine) RunChanged() (bool, Status, Phase) { return m.runChanged, m.prevRun, m.prevPhase }

// Stopped reports a step that stopped the run (a cancel or a timeout): the run's end must
// be stored before its tasks', since they alone would read as a failure.
func (m *Machine) Stopped() bool { return m.stopped }

// Effects returns what the step owes.
func (m *Machine) Effects() Effects { return m.eff }

func (m *Machine) touch(i int) {
	if _, ok := m.changed[i]; !ok {
		m.changed[i] = m.S.Tasks[i].Status
	}
}

// Start moves a queued run to running and runs its start task.
func (m *Machine) Start() error {
	r := m.S.Run
	if r.Phase != Queued && r.Phase != Pending {
		return errPhase(r)
	}
	r.Phase, r.Status = PhaseRunning, Running
	r.Queued = false
	r.StartTime = m.Now
	if r.Timeout > 0 {
		r.Deadline = m.Now.Add(time.Duration(r.Timeout) * time.Minute)
	}
	m.runChanged = true
	m.begin(m.S.G.Start)
	m.maybeFinish()
	return nil
}

// ErrInvalidPhase is returned for a move the run's phase does not allow.
type ErrInvalidPhase struct {
	Run    string
	Phase  Phase
	Status Status
}

func (e *ErrInvalidPhase) Error() string {
	return fmt.Sprintf("workflow run %s is %s (phase %s)", e.Run, e.Status, e.Phase)
}

func errPhase(r *Run) error { return &ErrInvalidPhase{Run: r.ID, Phase: r.Phase, Status: r.Status} }

// complete ends task i and lets its dependants move.
func (m *Machine) complete(i int, status Status, msg string) {
	t := m.S.Tasks[i]
	if t.Status.Terminal() {
		return
	}
	m.touch(i)
	if t.Status == Waiting && t.Type == tasktype.Approval {
		m.S.approvals--
		m.syncAwaiting()
	}
	t.Status, t.StatusMessage = status, m.S.Scrub(msg)
	t.EndTime = m.Now
	if t.StartTime.IsZero() && status != Skipped {
		t.StartTime = m.Now
	}
	t.WakeAt, t.Runner = time.Time{}, ""
	m.S.left--
	if len(t.Results) > 0 {
		m.S.results[t.Name] = t.Results
		m.S.values += size(t.Results)
	}
	if len(t.SecretResults) > 0 {
		m.S.secretResults[t.Name] = names(t.SecretResults)
	}
	if m.S.Run.Phase.Ended() {
		return
	}
	for _, e := range m.S.G.Out[i] {
		m.arrive(e)
	}
}

// arrive records edge e's outcome at its downstream task and decides that task when it can.
func (m *Machine) arrive(e Edge) {
	s := m.S
	s.count(e)
	v := e.To
	if s.Tasks[v].Status != NotStarted {
		return // a join: any task already started
	}
	m.decide(v)
}

// decide begins or skips task v, not started, as far as its incoming edges' outcomes
// allow: a join any begins at its first live edge, a join all once every edge arrived
// and one is live; a task none of whose edges can be live is skipped.
func (m *Machine) decide(v int) {
	s := m.S
	all := len(s.G.In[v])
	switch {
	case s.G.Any[v] && s.liveHeld[v] > 0:
		m.begin(v)
	case s.arrived[v] < all:
	case !s.G.Any[v] && s.held[v] == all && s.liveHeld[v] > 0:
		m.begin(v)
	default:
		m.complete(v, Skipped, "")
	}
}

// maybeFinish completes the run once every task has ended.
func (m *Machine) maybeFinish() {
	r := m.S.Run
	if m.S.left > 0 || r.Phase.Ended() {
		return
	}
	status, msg := Succeeded, ""
	if m.S.Tasks[m.S.G.End].Status != Succeeded || m.unhandledFailure() {
		status, msg = Failed, m.failureMessage()
	}
	if r.FinalStatus != "" {
		status = r.FinalStatus
		if status == Succeeded {
			msg = ""
		} else if msg == "" {
			msg = "status set to " + string(status) + " by a setwfstatus task"
		}
	}
	m.end(status, msg)
	if status != Succeeded && status != Cancelled && r.Retries > 0 {
		m.eff.RetryRun = true
	}
}

// unhandledFailure reports a task that failed without a `failure` edge to handle it: an
// `always` edge carries the run on to the end, but the failure still fails the run.
func (m *Machine) unhandledFailure() bool {
	for i, t := range m.S.Tasks {
		if failed(t.Status) && !m.handled(i) {
			return true
		}
	}
	return false
}

func (m *Machine) handled(i int) bool {
	for _, e := range m.S.G.Out[i] {
		if e.Exec == Failure {
			return true
		}
	}
	return false
}

func failed(s Status) bool { return s == Failed || s == Invalid || s == TimedOut || s == Cancelled }

func (m *Machine) failureMessage() string {
	for i, t := range m.S.Tasks {
		if failed(t.Status) && !m.handled(i) {
			msg := fmt.Sprintf("task '%s' %s", t.Name, t.Status)
			if t.StatusMessage != "" {
				msg += ": " + t.StatusMessage
			}
			return msg
		}
	}
	return "the end task was not reached"
}

func (m *Machine) end(status Status, msg string) {
	r := m.S.Run
	r.Status, r.Phase, r.StatusMessage = status, Completed, m.S.Scrub(msg)
	r.EndTime = m.Now
	r.AwaitingApproval = false
	if r.StartTime.IsZero() {
		r.StartTime = m.Now
	}
	m.runChanged = true
}

// Cancel stops a run that has not ended: running tasks are cancelled, pending ones
// skipped. Its child runs are the engine's to cancel, once the stop is stored (see
// Run.Stopped).
func (m *Machine) Cancel(msg string) error {
	return m.stop(Cancelled, msg)
}

func (m *Machine) stop(status Status, msg string) error {
	r := m.S.Run
	if r.Phase.Ended() {
		return errPhase(r)
	}
	// The run ends first so that ending its tasks moves nothing downstream.
	m.end(status, msg)
	m.stopped = true
	for i, t := range m.S.Tasks {
		switch {
		case t.Status.Terminal():
		case t.Status == NotStarted:
			m.complete(i, Skipped, "")
		default:
			m.complete(i, status, msg)
		}
	}
	return nil
}

// Claim gives the current attempt of task i to runner. A claim the runner holds already
// is granted again, with no change: a claim whose answer was lost is asked again, and a
// runner takes each attempt once (it drops a dispatch of an attempt it has claimed). A
// claim from any other runner is refused, so a dispatch sent twice runs once.
func (m *Machine) Claim(i, attempt int, runner string) bool {
	t := m.S.Tasks[i]
	if t.Status == Running && t.Attempt == attempt && t.Runner == runner && !m.S.Run.Phase.Ended() {
		return true
	}
	if t.Status != Ready || t.Attempt != attempt || m.S.Run.Phase.Ended() {
		return false
	}
	m.touch(i)
	t.Status, t.Runner, t.Heartbeat = Running, runner, m.Now
	if t.StartTime.IsZero() {
		t.StartTime = m.Now
	}
	t.StatusMessage = ""
	return true
}

// Ended applies the end of attempt of task i, as its runner or worker reported it; secret
// names the results that hold a secret. It reports false for a report about an attempt that
// is not current (a duplicate, or one overtaken by a retry or a cancel).
func (m *Machine) Ended(i, attempt int, status Status, msg string, results map[string]string, secret []string) bool {
	t := m.S.Tasks[i]
	if t.Attempt != attempt || (t.Status != Running && t.Status != Ready) || m.S.Run.Phase.Ended() {
		return false
	}
	m.touch(i)
	if status == Succeeded {
		for name, v := range results {
			if len(v) > MaxResultBytes {
				status, msg = Failed, fmt.Sprintf("result '%s' is %d bytes; a result may hold at most %d", name, len(v), MaxResultBytes)
			}
		}
	}
	if status == Succeeded && len(results) > 0 {
		if err := m.S.fits(size(results)); err != nil {
			status, msg = Failed, "its results: "+err.Error()
		}
	}
	if status == Succeeded {
		t.Results, t.SecretResults = results, m.S.secretNames(results, secret)
		m.complete(i, Succeeded, msg)
		m.maybeFinish()
		return true
	}
	m.failAttempt(i, status, msg)
	m.maybeFinish()
	return true
}

// failAttempt ends the current attempt of task i unsuccessfully: a retry when retries are
// left, else the task's end.
func (m *Machine) failAttempt(i int, status Status, msg string) {
	t := m.S.Tasks[i]
	def := m.S.G.Tasks[i]
	if status == Cancelled || def.Retries == nil || t.Attempt > *def.Retries || IsGate(def.Type) {
		m.complete(i, status, msg)
		return
	}
	delay := retryDelay(def, t.Attempt)
	t.Status, t.Runner = Waiting, ""
	t.WakeAt = m.Now.Add(delay)
	t.StatusMessage = m.S.Scrub(fmt.Sprintf("attempt %d %s: %s; retrying in %s", t.Attempt, status, msg, delay))
}

// retryDelay is retryDelay seconds doubled per attempt, capped at an hour; 1 s by default.
func retryDelay(def TaskDef, attempt int) time.Duration {
	base := time.Second
	if def.RetryDelay != nil {
		base = time.Duration(*def.RetryDelay) * time.Second
	}
	d := base
	for range attempt - 1 {
		if d *= 2; d >= time.Hour {
			return time.Hour
		}
	}
	return min(d, time.Hour)
}

// Limits (API.md §8).
const (
	// MaxResultBytes bounds one task result.
	MaxResultBytes = 64 << 10
	// HeartbeatLease is how long a runner may stay silent before its attempt is lost.
	HeartbeatLease = 30 * time.Second
)

// Tick applies whatever is due at m.Now: the run's deadline, ended sleeps, retries due,
// attempts past their deadline and runners silent past lease.
func (m *Machine) Tick(lease time.Duration) {
	r := m.S.Run
	if r.Phase != PhaseRunning {
		return
	}
	if !r.Deadline.IsZero() && !m.Now.Before(r.Deadline) {
		_ = m.stop(TimedOut, fmt.Sprintf("the run exceeded its timeout of %d minutes", r.Timeout))
		return
	}
	for i, t := range m.S.Tasks {
		switch {
		case t.Status == Waiting && !t.WakeAt.IsZero() && !m.Now.Before(t.WakeAt):
			if typ := m.S.G.Tasks[i].Type; typ == tasktype.Sleep {
				m.touch(i)
				m.complete(i, Succeeded, "")
			} else if IsGate(typ) {
				m.gateTimedOut(i)
			} else {
				m.touch(i)
				m.nextAttempt(i)
			}
		case (t.Status == Running || t.Status == Ready) && !t.Deadline.IsZero() && !m.Now.Before(t.Deadline):
			m.touch(i)
			msg := fmt.Sprintf("the task exceeded its timeout of %d minutes", t.Timeout)
			if t.Type == tasktype.RunScheduledWorkflow && !t.WakeAt.IsZero() {
				msg += "; " + t.StatusMessage // why it was still trying
			}
			m.failAttempt(i, TimedOut, msg)
		case t.Status == Running && t.Type == tasktype.RunScheduledWorkflow && !t.WakeAt.IsZero() && !m.Now.Before(t.WakeAt):
			// Its delay is over: ask the schedules service again.
			m.touch(i)
			t.WakeAt = time.Time{}
			m.eff.Schedule = append(m.eff.Schedule, i)
		case t.Status == Running && t.Runner != "" && lease > 0 && m.Now.Sub(t.Heartbeat) > lease:
			m.touch(i)
			m.failAttempt(i, Failed, fmt.Sprintf("runner %s %s", t.Runner, stoppedReporting))
		case t.Status == Ready && lease > 0 && RunsOnRunner(t.Type) && m.Now.Sub(t.DispatchedAt) > lease:
			// No runner claimed it: the dispatch may be lost with a runner that stopped.
			m.dispatch(i)
		}
	}
	m.maybeFinish()
}

// stoppedReporting ends the message of an attempt the lease took from its runner.
const stoppedReporting = "stopped reporting"

// EndedLate applies the success of attempt of task i reported by runner after the lease
// took the attempt from it (its beats did not reach the runs service, or its end came
// late), while the attempt that retries it has not been claimed: it waits for its retry
// delay or for a runner. The step ran and succeeded once; taking its end spares running it
// a second time, and the retry, refused when claimed, never runs. It reports false, and
// changes nothing, for any other report (Ended's to apply). A retry claimed already runs:
// then the late end cannot spare it, and is dropped.
func (m *Machine) EndedLate(i, attempt int, runner string, status Status, msg string, results map[string]string, secret []string) bool {
	if status != Succeeded || m.S.Run.Phase.Ended() || !m.lostUnclaimed(i, attempt, runner) {
		return false
	}
	t := m.S.Tasks[i]
	t.Attempt, t.WakeAt, t.Status, t.Runner = attempt, time.Time{}, Running, runner
	return m.Ended(i, attempt, status, msg, results, secret)
}

// lostUnclaimed reports whether attempt of task i was taken by the lease from runner (any
// runner when empty), and its retry is not yet claimed.
// The task's message says so until a claim clears it (failAttempt's "attempt <n> failed:
// runner <name> stopped reporting; retrying in …").
func (m *Machine) lostUnclaimed(i, attempt int, runner string) bool {
	t := m.S.Tasks[i]
	// Waiting for its retry delay, the task still counts the attempt lost; dispatched,
	// the next.
	waiting := t.Status == Waiting && t.Attempt == attempt
	dispatched := t.Status == Ready && t.Attempt == attempt+1
	if t.Runner != "" || (!waiting && !dispatched) {
		return false
	}
	head, _, _ := strings.Cut(t.StatusMessage, ";")
	who, ok := strings.CutPrefix(head, fmt.Sprintf("attempt %d %s: runner ", attempt, Failed))
	if !ok {
		return false
	}
	who, ok = strings.CutSuffix(who, " "+stoppedReporting)
	return ok && (runner == "" || who == runner)
}

// NextWake is when Tick next has something to do; zero when nothing is timed.
func (m *Machine) NextWake(lease time.Duration) time.Time {
	next, _ := m.Wake(lease)
	return next
}

// Wake is NextWake, and whether the run only waits: it is running and every task that has
// not ended waits for a decision, a callback, a lock, a timer or a child run, none for a
// runner. Such a run needs nothing in memory until one of those comes, or its wake.
func (m *Machine) Wake(lease time.Duration) (next time.Time, idle bool) {
	idle = true
	at := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	r := m.S.Run
	if r.Phase != PhaseRunning {
		return next, false
	}
	idle = !r.Queued
	at(r.Deadline)
	for _, t := range m.S.Tasks {
		switch t.Status {
		case Waiting:
			at(t.WakeAt)
		case Ready:
			idle = false
			at(t.Deadline)
			if lease > 0 && RunsOnRunner(t.Type) {
				at(t.DispatchedAt.Add(lease))
			}
		case Running:
			idle = idle && t.Type == tasktype.RunWorkflow && t.Child != ""
			at(t.Deadline)
			at(t.WakeAt) // a runscheduledworkflow task's next ask
			if t.Runner != "" && lease > 0 {
				at(t.Heartbeat.Add(lease))
			}
		}
	}
	return next, idle
}

// Heartbeat records that runner still executes attempt of task i. cancel says the attempt
// should stop; ok is false when the attempt is not this runner's any more.
func (m *Machine) Heartbeat(i, attempt int, runner string) (cancel, ok bool) {
	t := m.S.Tasks[i]
	if t.Attempt != attempt || t.Runner != runner {
		return false, false
	}
	if t.Status != Running {
		return true, true
	}
	t.Heartbeat = m.Now
	return false, true
}

// ChildStarted records the child run that attempt of runworkflow task i started. It
// answers false when the task no longer wants that child: the run ended (a cancel came
// while the child was being created) or the attempt is over. Nothing else will ever cancel
// such a child, so the caller must.
func (m *Machine) ChildStarted(i, attempt int, child string, wait bool) bool {
	t := m.S.Tasks[i]
	if t.Child == child {
		return true // recorded already, by a start this one raced with
	}
	if t.Status != Running || t.Attempt != attempt || t.Child != "" || m.S.Run.Phase.Ended() {
		return false
	}
	m.touch(i)
	t.Child = child
	if !wait {
		t.Results = map[string]string{"workflowRunRef": child}
		m.complete(i, Succeeded, "")
		m.maybeFinish()
	}
	return true
}

// ChildEnded takes the status of the child run of task i; secret names the child's results
// that came from a secret. It reports whether the task was waiting for that child.
func (m *Machine) ChildEnded(i int, child string, status Status, results map[string]string, secret []string) bool {
	t := m.S.Tasks[i]
	if t.Child != child || t.Status != Running || m.S.Run.Phase.Ended() {
		return false
	}
	m.touch(i)
	if results == nil {
		results = map[string]string{}
	}
	results["workflowRunRef"] = child
	msg := ""
	if status != Succeeded {
		msg = "child run " + child + " " + string(status)
	}
	if err := m.S.fits(size(results)); err != nil {
		results, status, msg = map[string]string{"workflowRunRef": child}, Failed, "the child run's results: "+err.Error()
	}
	t.Results, t.SecretResults = results, m.S.secretNames(results, secret)
	if status == Succeeded {
		m.complete(i, status, msg)
	} else {
		// A child that did not succeed is a failed attempt: the task's retries start a new
		// child.
		m.failAttempt(i, status, msg)
	}
	m.maybeFinish()
	return true
}

// Fail ends task i as status with msg, wherever it is (a child run that cannot start).
func (m *Machine) Fail(i int, status Status, msg string) {
	if m.S.Tasks[i].Status.Terminal() || m.S.Run.Phase.Ended() {
		return
	}
	m.touch(i)
	m.complete(i, status, msg)
	m.maybeFinish()
}

// Recover re-derives what a run owes after it was loaded by a replica that did not make
// its last moves: tasks whose upstreams all ended but that were never decided, and the
// dispatches and child runs of tasks in flight. The caller re-sends those effects.
func (m *Machine) Recover() {
	s := m.S
	if s.Run.Phase.Ended() {
		// A stop stored the run's end but not all its tasks': end them as it did.
		for i, t := range s.Tasks {
			switch {
			case t.Status.Terminal():
			case t.Status == NotStarted:
				m.complete(i, Skipped, "")
			default:
				m.complete(i, s.Run.Status, s.Run.StatusMessage)
			}
		}
		return
	}
	if s.Run.Phase != PhaseRunning {
		return
	}
	if s.Tasks[s.G.Start].Status == NotStarted {
		m.begin(s.G.Start)
	}
	for v, t := range s.Tasks {
		if t.Status == NotStarted && len(s.G.In[v]) > 0 {
			m.decide(v)
		}
	}
	for i, t := range s.Tasks {
		typ := s.G.Tasks[i].Type
		switch {
		case t.Status == Ready:
			m.dispatch(i)
		case t.Status == Running && typ == tasktype.RunWorkflow && t.Child == "":
			m.eff.StartChild = append(m.eff.StartChild, i)
		case t.Status == Running && typ == tasktype.RunScheduledWorkflow && t.WakeAt.IsZero():
			// Its ask may have been lost with the replica that made it; its key makes the
			// schedule it may have made the one answered again.
			m.eff.Schedule = append(m.eff.Schedule, i)
		case HasAction(typ) && t.Attempt > 0 && t.Status != Skipped:
			// Its action may not have been made, or closed, before the step was stored.
			m.eff.Actions = append(m.eff.Actions, i)
		case t.Status == Waiting && typ == tasktype.AcquireLock:
			// Asking again is harmless: a waiter already queued keeps its place, and one
			// granted the lock meanwhile learns it now.
			m.eff.Acquire = append(m.eff.Acquire, i)
		case t.Status == Running && typ == tasktype.ReleaseLock:
			m.eff.Release = append(m.eff.Release, i)
		}
	}
	// A callback kept by a step that did not see its task begin (the two stepped at once,
	// and the task's step was stored in part) is the task's, as if it came after. Taken
	// apart from the pass above, which would dispatch again what the tasks after it begin.
	for i, t := range s.Tasks {
		if t.Status == Waiting && t.Type == tasktype.EventWait {
			if cb, ok := s.Run.Callbacks[Text(t.Params["topic"])]; ok {
				m.takeCallback(i, cb)
			}
		}
	}
	// The run's flag follows its approvals as they are, whatever step last wrote it.
	m.syncAwaiting()
	m.maybeFinish()
}

// Finalize moves a completed run to finalized.
func (m *Machine) Finalize() error {
	r := m.S.Run
	if r.Phase != Completed {
		return errPhase(r)
	}
	r.Phase = Finalized
	m.runChanged = true
	return nil
}

// Repair restores what the run document owes its task runs after a step was stored only
// in part: results and a final status set by tasks that ended.
func (m *Machine) Repair() {
	r := m.S.Run
	for i, t := range m.S.Tasks {
		if t.Status != Succeeded {
			continue
		}
		switch m.S.G.Tasks[i].Type {
		case tasktype.SetWFProperty:
			name := Text(t.Params["output"])
			if _, ok := r.Results[name]; !ok && name != "" {
				if r.Results == nil {
					r.Results = map[string]any{}
				}
				r.Results[name] = t.Params["value"]
				r.SecretResults = setName(r.SecretResults, name, slices.Contains(t.SecretParams, "value"))
				m.runChanged = true
			}
		case tasktype.SetWFStatus:
			if s := Status(Text(t.Params["status"])); r.FinalStatus != s {
				r.FinalStatus = s
				m.runChanged = true
			}
		}
	}
}

// MarkRunChanged records a change made to the run document outside the machine's moves.
func (m *Machine) MarkRunChanged() { m.runChanged = true }

// secretNames names, sorted, the results that hold a secret: those named in secret, as
// whoever made them said, and any other whose text holds one of SecretValues, so that a
// worker or a caller that did not say so cannot put a secret the run knows of in clear.
func (s *State) secretNames(results map[string]string, secret []string) []string {
	var out []string
	for _, n := range secret {
		if _, ok := results[n]; ok {
			out = setName(out, n, true)
		}
	}
	if len(out) == len(results) {
		return out
	}
	known := s.SecretValues()
	for n, v := range results {
		if secrets.MaskText(v, known) != v {
			out = setName(out, n, true)
		}
	}
	return out
}
