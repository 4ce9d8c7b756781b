package domain

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasktype"
)

// Gates are the task types that wait for people or for the world: an approval or manual
// task for its action's decision, an eventwait task for a callback, an acquirelock task for
// its lock. A gate keeps its run running and itself waiting, as a stored state only; what
// ends it comes in as a step (ActionDecided, CallbackArrived, LockGranted) or is its
// timeout, found by Tick. Gates end on their outcome: they are not retried.

// Limits of gates.
const (
	// MaxApprovers bounds numberOfApprovers.
	MaxApprovers = 100
	// MaxKeptCallbacks bounds the topics whose early callbacks a run keeps.
	MaxKeptCallbacks = 100
	// MaxGateTimeout bounds a gate's timeout: a year.
	MaxGateTimeout = 366 * 24 * time.Hour
)

// IsGate reports whether tasks of type typ wait for people or the world.
func IsGate(typ string) bool {
	switch typ {
	case tasktype.Approval, tasktype.Manual, tasktype.EventWait, tasktype.AcquireLock, tasktype.ReleaseLock:
		return true
	}
	return false
}

// HasAction reports whether tasks of type typ wait on an action.
func HasAction(typ string) bool { return typ == tasktype.Approval || typ == tasktype.Manual }

// beginGate starts gate task v, its params resolved: it waits (or, for an eventwait whose
// callback came first and a releaselock, moves on at once).
func (m *Machine) beginGate(v int, values map[string]any) {
	t := m.S.Tasks[v]
	def := m.S.G.Tasks[v]
	switch def.Type {
	case tasktype.Approval, tasktype.Manual:
		if _, err := ActionSettings(def.Type, values); err != nil {
			m.complete(v, Invalid, err.Error())
			return
		}
		wake, err := m.gateWake(def, values, time.Minute)
		if err != nil {
			m.complete(v, Invalid, err.Error())
			return
		}
		t.Status, t.WakeAt = Waiting, wake
		if def.Type == tasktype.Approval {
			m.S.approvals++
			m.syncAwaiting()
		}
		m.eff.Actions = append(m.eff.Actions, v)
	case tasktype.EventWait:
		topic := Text(values["topic"])
		if topic == "" {
			m.complete(v, Invalid, "param 'topic' must name the callback's topic")
			return
		}
		wake, err := m.gateWake(def, values, time.Minute)
		if err != nil {
			m.complete(v, Invalid, err.Error())
			return
		}
		t.Status, t.WakeAt = Waiting, wake
		if cb, ok := m.S.Run.Callbacks[topic]; ok {
			m.takeCallback(v, cb)
		}
	case tasktype.AcquireLock:
		if Text(values["key"]) == "" {
			m.complete(v, Invalid, "param 'key' must name the lock")
			return
		}
		wake, err := m.gateWake(def, values, time.Second)
		if err != nil {
			m.complete(v, Invalid, err.Error())
			return
		}
		t.Status, t.WakeAt = Waiting, wake
		m.eff.Acquire = append(m.eff.Acquire, v)
	case tasktype.ReleaseLock:
		if Text(values["key"]) == "" {
			m.complete(v, Invalid, "param 'key' must name the lock")
			return
		}
		t.Status = Running
		m.eff.Release = append(m.eff.Release, v)
	}
}

// gateWake is when gate task def times out: its `timeout` param (in unit) or its own
// timeout (minutes), the earlier; zero when neither is set. A gate does not take the
// default task timeout: approvals wait days. The run's deadline stops it in any case.
func (m *Machine) gateWake(def TaskDef, values map[string]any, unit time.Duration) (time.Time, error) {
	var d time.Duration
	if raw, ok := values["timeout"]; ok && Text(raw) != "" {
		n, err := number(raw)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("param 'timeout' must be a number of %s, got %q", unitName(unit), Text(raw))
		}
		if n*float64(unit) > float64(MaxGateTimeout) {
			return time.Time{}, fmt.Errorf("param 'timeout' may be at most %s", MaxGateTimeout)
		}
		d = time.Duration(n * float64(unit))
	}
	if def.Timeout != nil && *def.Timeout > 0 {
		if own := time.Duration(*def.Timeout) * time.Minute; d == 0 || own < d {
			d = own
		}
	}
	if d == 0 {
		return time.Time{}, nil
	}
	return m.Now.Add(d), nil
}

func unitName(unit time.Duration) string {
	if unit == time.Second {
		return "seconds"
	}
	return "minutes"
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("not a number")
		}
		return x, nil
	case string:
		var f float64
		if _, err := fmt.Sscan(strings.TrimSpace(x), &f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("not a number")
		}
		return f, nil
	}
	return 0, fmt.Errorf("not a number")
}

// ActionConfig is what an approval or manual task's params say of its action.
type ActionConfig struct {
	Instructions  string
	ApproverGroup string
	Required      int
	// ApproveOnTimeout approves (rather than rejects) an action nobody decided in time.
	ApproveOnTimeout bool
	Form             []param.Param
}

// ActionSettings reads an approval or manual task's params: `instructions`,
// `approverGroupRef` (alias `approverGroupId`), `numberOfApprovers` (alias
// `numberOfApprovals`, default 1), `onTimeout` (`reject`, the default, or `approve`), and
// for a manual task the form, `params` (alias `form`): AbstractParam definitions.
func ActionSettings(typ string, values map[string]any) (ActionConfig, error) {
	c := ActionConfig{Instructions: Text(values["instructions"]), Required: 1}
	c.ApproverGroup = Text(first(values, "approverGroupRef", "approverGroupId"))
	if raw := first(values, "numberOfApprovers", "numberOfApprovals"); raw != nil && Text(raw) != "" {
		n, err := number(raw)
		if err != nil || n != math.Trunc(n) || n < 1 || n > MaxApprovers {
			return c, fmt.Errorf("param 'numberOfApprovers' must be a whole number from 1 to %d, got %q", MaxApprovers, Text(raw))
		}
		c.Required = int(n)
	}
	switch strings.ToLower(Text(values["onTimeout"])) {
	case "", "reject":
	case "approve":
		c.ApproveOnTimeout = true
	default:
		return c, fmt.Errorf("param 'onTimeout' must be reject or approve, got %q", Text(values["onTimeout"]))
	}
	if typ != tasktype.Manual {
		return c, nil
	}
	c.Required = 1
	raw := first(values, "params", "form")
	if raw == nil || Text(raw) == "" {
		return c, nil
	}
	if s, ok := raw.(string); ok {
		// A form given as JSON text (a designer's text box) reads as the JSON it holds.
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return c, fmt.Errorf("param 'params' must be a list of parameter definitions: %v", err)
		}
		raw = v
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return c, fmt.Errorf("param 'params': %v", err)
	}
	if err := json.Unmarshal(b, &c.Form); err != nil {
		return c, fmt.Errorf("param 'params' must be a list of parameter definitions: %v", err)
	}
	seen := map[string]bool{}
	for i, p := range c.Form {
		if p.Name == "" {
			return c, fmt.Errorf("param 'params': definition %d has no name", i)
		}
		if seen[p.Name] {
			return c, fmt.Errorf("param 'params': '%s' is defined twice", p.Name)
		}
		seen[p.Name] = true
	}
	return c, nil
}

// FormHoldsSecret reports whether v, a manual task's form as its `params` (or `form`)
// param holds it, gives one of its password fields a default or a value.
func FormHoldsSecret(v any) bool {
	c, err := ActionSettings(tasktype.Manual, map[string]any{"params": v})
	if err != nil {
		return false
	}
	for _, p := range c.Form {
		if p.Type == "password" && firstPresent(p.Value, p.Default) != nil {
			return true
		}
	}
	return false
}

func first(values map[string]any, names ...string) any {
	for _, n := range names {
		if v, ok := values[n]; ok && v != nil {
			return v
		}
	}
	return nil
}

// NewAction is the action of gate task i's current attempt, as it is created.
func (s *State) NewAction(i int, now time.Time) (*Action, error) {
	t := s.Tasks[i]
	r := s.Run
	c, err := ActionSettings(t.Type, t.Params)
	if err != nil {
		return nil, err
	}
	return &Action{
		ID: ActionID(t.ID, t.Attempt), Team: r.Team, Type: ActionType(t.Type), Status: ActionSubmitted,
		Workflow: r.Workflow, WorkflowName: r.WorkflowDisplayName, RunID: r.ID, TaskRunID: t.ID, TaskName: t.Name,
		Attempt: t.Attempt, Instructions: s.Scrub(c.Instructions), ApproverGroup: c.ApproverGroup, Required: c.Required,
		Form: c.Form, Initiator: r.InitiatedBy.Person, CreationDate: now.UTC(),
	}, nil
}

// ActionState is what action a of gate task i should be once the task has ended: its
// status, and why when no person decided it. ok is false while the task still waits, or
// when a is not the task's current action.
func (s *State) ActionState(i int, a *Action) (status ActionStatus, reason string, ok bool) {
	t := s.Tasks[i]
	if a.ID != ActionID(t.ID, t.Attempt) || !t.Status.Terminal() {
		return "", "", false
	}
	switch {
	case t.Status == Succeeded:
		return ActionApproved, t.StatusMessage, true
	case t.Status == Failed, t.Status == TimedOut && !s.Run.Stopped():
		return ActionRejected, t.StatusMessage, true
	default:
		// The run was cancelled or timed out while the task waited.
		return ActionCancelled, t.StatusMessage, true
	}
}

// syncAwaiting keeps the run's awaitingApproval in step with its waiting approvals.
func (m *Machine) syncAwaiting() {
	r := m.S.Run
	if aw := m.S.approvals > 0 && !r.Phase.Ended(); aw != r.AwaitingApproval {
		r.AwaitingApproval = aw
		m.runChanged = true
	}
}

// waitingGate reports whether task i is gate type typ waiting on attempt.
func (m *Machine) waitingGate(i, attempt int, typ string) bool {
	t := m.S.Tasks[i]
	return !m.S.Run.Phase.Ended() && t.Type == typ && t.Status == Waiting && t.Attempt == attempt
}

// ActionDecided ends approval or manual task i with its action's decision: approved, the
// task succeeds with results (a manual form's values, secret naming those of password
// type); rejected, it fails. It answers false when the task no longer waits on that
// attempt's action (decided already, the run ended).
func (m *Machine) ActionDecided(i, attempt int, status ActionStatus, msg string, results map[string]string, secret []string) bool {
	t := m.S.Tasks[i]
	if !HasAction(t.Type) || !m.waitingGate(i, attempt, t.Type) {
		return false
	}
	m.touch(i)
	switch status {
	case ActionApproved:
		if err := m.S.fits(size(results)); err != nil {
			m.complete(i, Failed, "the form's values: "+err.Error())
			break
		}
		t.Results, t.SecretResults = results, m.S.secretNames(results, secret)
		m.complete(i, Succeeded, msg)
	case ActionRejected:
		m.complete(i, Failed, msg)
	default:
		m.complete(i, Cancelled, msg)
	}
	m.maybeFinish()
	return true
}

// CallbackArrived applies a wait-for-event callback on topic: every eventwait task
// waiting for it ends, status (Succeeded or Failed) with the callback's data as its result
// `data`. When none waits, the callback is kept for one that starts later. It refuses a
// callback on a new topic when the run keeps MaxKeptCallbacks already.
func (m *Machine) CallbackArrived(topic string, status Status, data string) error {
	r := m.S.Run
	if r.Phase.Ended() {
		return errPhase(r)
	}
	cb := Callback{Status: status, Data: data, At: m.Now}
	if len(data) > MaxResultBytes {
		return &ErrRequest{Message: fmt.Sprintf("The callback's body is %d bytes; a task result may hold at most %d.", len(data), MaxResultBytes)}
	}
	took := false
	for i, t := range m.S.Tasks {
		if t.Type == tasktype.EventWait && t.Status == Waiting && Text(t.Params["topic"]) == topic {
			m.takeCallback(i, cb)
			took = true
		}
	}
	if !took {
		if _, ok := r.Callbacks[topic]; !ok && len(r.Callbacks) >= MaxKeptCallbacks {
			return &ErrRequest{Message: fmt.Sprintf("Run %s keeps %d callbacks for tasks not yet waiting; no more topics are kept.", r.ID, MaxKeptCallbacks)}
		}
		if r.Callbacks == nil {
			r.Callbacks = map[string]Callback{}
		}
		r.Callbacks[topic] = cb
		m.runChanged = true
	}
	m.maybeFinish()
	return nil
}

// takeCallback ends waiting eventwait task i with callback cb.
func (m *Machine) takeCallback(i int, cb Callback) {
	t := m.S.Tasks[i]
	m.touch(i)
	var results map[string]string
	if cb.Data != "" {
		results = map[string]string{"data": cb.Data}
		if err := m.S.fits(size(results)); err != nil {
			m.complete(i, Failed, "the callback's data: "+err.Error())
			return
		}
	}
	t.Results, t.SecretResults = results, m.S.secretNames(results, nil)
	msg := ""
	if cb.Status != Succeeded {
		msg = "the callback on topic '" + Text(t.Params["topic"]) + "' said " + string(cb.Status)
	}
	m.complete(i, cb.Status, msg)
}

// LockGranted ends acquirelock task i, attempt, which now holds its lock. held is false
// when the task does not want it (it stopped waiting, the run ended): the caller must let
// the lock go again. A grant told twice is held, unchanged.
func (m *Machine) LockGranted(i, attempt int) (held, changed bool) {
	t := m.S.Tasks[i]
	if t.Type != tasktype.AcquireLock || t.Attempt != attempt {
		return false, false
	}
	if t.Status == Succeeded {
		// Told already; a run that ended since lets its locks go as it is put away.
		return true, false
	}
	if t.Status != Waiting || m.S.Run.Phase.Ended() {
		return false, false
	}
	m.touch(i)
	m.complete(i, Succeeded, "")
	m.maybeFinish()
	return true, true
}

// LockReleased ends releaselock task i, attempt, once its lock was let go; held says
// whether the run held it then. It answers false when the task is not running that
// attempt (ended already, the run ended).
func (m *Machine) LockReleased(i, attempt int, held bool) bool {
	t := m.S.Tasks[i]
	if m.S.Run.Phase.Ended() || t.Type != tasktype.ReleaseLock || t.Status != Running || t.Attempt != attempt {
		return false
	}
	msg := ""
	if key := Text(t.Params["key"]); !held && !m.S.heldUntil(key, i) {
		msg = "the run did not hold lock '" + key + "'"
	}
	m.touch(i)
	m.complete(i, Succeeded, msg)
	m.maybeFinish()
	return true
}

// heldUntil reports whether the run held lock key until releaselock task i: an
// acquirelock task took it and no other releaselock task let it go since. The lock then
// was let go by an earlier try of task i, which a crash kept from ending the task.
func (s *State) heldUntil(key string, i int) bool {
	var took, let time.Time
	for j, t := range s.Tasks {
		if t.Status != Succeeded || Text(t.Params["key"]) != key {
			continue
		}
		switch {
		case t.Type == tasktype.AcquireLock && t.EndTime.After(took):
			took = t.EndTime
		case t.Type == tasktype.ReleaseLock && j != i && t.EndTime.After(let):
			let = t.EndTime
		}
	}
	return !took.IsZero() && !let.After(took)
}

// gateTimedOut ends gate task i, whose timeout passed while it waited.
func (m *Machine) gateTimedOut(i int) {
	t := m.S.Tasks[i]
	m.touch(i)
	switch t.Type {
	case tasktype.Approval, tasktype.Manual:
		c, _ := ActionSettings(t.Type, t.Params)
		if c.ApproveOnTimeout {
			m.complete(i, Succeeded, "nobody decided in time: approved as the task's onTimeout says")
		} else {
			m.complete(i, TimedOut, "nobody decided in time: rejected")
		}
		m.eff.Actions = append(m.eff.Actions, i)
	case tasktype.EventWait:
		m.complete(i, TimedOut, "no callback on topic '"+Text(t.Params["topic"])+"' came in time")
	case tasktype.AcquireLock:
		m.complete(i, TimedOut, "lock '"+Text(t.Params["key"])+"' was not free in time")
		m.eff.Leave = append(m.eff.Leave, i)
	}
}

// LockWaiter is acquirelock or releaselock task i's lock key and its place as a waiter.
func (s *State) LockWaiter(i int, at time.Time) (key string, w Waiter) {
	t := s.Tasks[i]
	return Text(t.Params["key"]), Waiter{Run: s.Run.ID, Task: i, Attempt: t.Attempt, At: at}
}
