package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/params"
)

// begin starts task v: inline types execute here and end at once; the others move to
// where they wait for a runner, a worker, a timer or a child run.
func (m *Machine) begin(v int) {
	t := m.S.Tasks[v]
	def := m.S.G.Tasks[v]
	m.touch(v)
	t.StartTime = m.Now
	t.Attempt = 1
	if t.Kept {
		// A retry from failure keeps what succeeded before.
		m.complete(v, Succeeded, "kept from run "+m.S.Run.RetryOf)
		if def.Type == tasktype.SetWFProperty || def.Type == tasktype.SetWFStatus {
			m.Repair()
		}
		return
	}
	values, secret, err := m.taskParams(v)
	if err != nil {
		m.complete(v, Invalid, err.Error())
		return
	}
	t.Params, t.SecretParams = values, secret
	switch def.Type {
	case tasktype.Start, tasktype.End:
		m.complete(v, Succeeded, "")
	case tasktype.Decision:
		t.Decision = Text(values["value"])
		m.complete(v, Succeeded, "")
	case tasktype.SetWFProperty:
		name := Text(values["output"])
		if name == "" {
			m.complete(v, Invalid, "param 'output' must name the run result to set")
			return
		}
		if err := m.S.fits(size(map[string]any{name: values["value"]})); err != nil {
			m.complete(v, Failed, err.Error())
			return
		}
		m.S.values += size(map[string]any{name: values["value"]})
		r := m.S.Run
		if r.Results == nil {
			r.Results = map[string]any{}
		}
		r.Results[name] = values["value"]
		secretValue := slices.Contains(secret, "value")
		r.SecretResults = setName(r.SecretResults, name, secretValue)
		m.runChanged = true
		t.Results = map[string]string{name: Text(values["value"])}
		if secretValue {
			t.SecretResults = []string{name}
		}
		m.complete(v, Succeeded, "")
	case tasktype.SetWFStatus:
		status := Status(strings.ToLower(Text(values["status"])))
		switch status {
		case Succeeded, Failed, Cancelled, Invalid, TimedOut:
			m.S.Run.FinalStatus = status
			m.runChanged = true
			m.complete(v, Succeeded, "")
		default:
			m.complete(v, Invalid, fmt.Sprintf("param 'status' must be succeeded, failed, cancelled, invalid or timedout, got %q", Text(values["status"])))
		}
	case tasktype.Sleep:
		d, err := millis(values["duration"])
		if err != nil {
			m.complete(v, Invalid, "param 'duration': "+err.Error())
			return
		}
		t.Status, t.WakeAt = Waiting, m.Now.Add(d)
	case tasktype.Template, tasktype.Custom, tasktype.Script, tasktype.Generic:
		if _, err := m.Step(v); err != nil {
			m.complete(v, Invalid, err.Error())
			return
		}
		t.Status = Ready
		t.Timeout = m.taskTimeout(def)
		t.Deadline = m.deadline(t.Timeout)
		m.dispatch(v)
	case tasktype.Approval, tasktype.Manual, tasktype.EventWait, tasktype.AcquireLock, tasktype.ReleaseLock:
		m.beginGate(v, values)
	case tasktype.RunWorkflow:
		if Text(values["workflowRef"]) == "" {
			m.complete(v, Invalid, "param 'workflowRef' must name a workflow of the team")
			return
		}
		t.Status = Running
		m.eff.StartChild = append(m.eff.StartChild, v)
	case tasktype.RunScheduledWorkflow:
		m.beginScheduled(v, values, secret)
	default:
		m.complete(v, Invalid, fmt.Sprintf("task type '%s' is not supported by the engine yet", def.Type))
	}
}

// taskTimeout is the task's timeout in minutes: its own, else the team default.
func (m *Machine) taskTimeout(def TaskDef) int {
	if def.Timeout != nil && *def.Timeout > 0 {
		return *def.Timeout
	}
	return m.S.Run.TaskDefaultTimeout
}

// deadline is now + minutes, capped by the run's deadline.
func (m *Machine) deadline(minutes int) time.Time {
	var d time.Time
	if minutes > 0 {
		d = m.Now.Add(time.Duration(minutes) * time.Minute)
	}
	if rd := m.S.Run.Deadline; !rd.IsZero() && (d.IsZero() || rd.Before(d)) {
		d = rd
	}
	return d
}

// nextAttempt sends task i out again after a retry delay: to the runners, or, for a
// runworkflow task, as a new child run, for a runscheduledworkflow task as a new ask for
// its schedule.
func (m *Machine) nextAttempt(i int) {
	t := m.S.Tasks[i]
	t.Attempt++
	switch m.S.G.Tasks[i].Type {
	case tasktype.RunWorkflow:
		t.Status, t.WakeAt, t.Child, t.Results, t.SecretResults = Running, time.Time{}, "", nil, nil
		m.eff.StartChild = append(m.eff.StartChild, i)
		return
	case tasktype.RunScheduledWorkflow:
		t.Status, t.WakeAt = Running, time.Time{}
		t.Deadline = m.deadline(t.Timeout)
		m.eff.Schedule = append(m.eff.Schedule, i)
		return
	}
	t.Status, t.WakeAt, t.Runner = Ready, time.Time{}, ""
	t.Deadline = m.deadline(t.Timeout)
	m.dispatch(i)
}

// dispatch sends task i's current attempt out (again).
func (m *Machine) dispatch(i int) {
	m.S.Tasks[i].DispatchedAt = m.Now
	m.eff.Dispatch = append(m.eff.Dispatch, i)
}

// Scope is what task i's references resolve against, without its own params.
func (m *Machine) Scope(i int) params.Scope {
	r := m.S.Run
	t := m.S.Tasks[i]
	ctx := map[string]string{
		"workflowrun-ref":       r.ID,
		"workflowrun-trigger":   r.Trigger,
		"workflowrun-initiator": r.InitiatedBy.ID,
		"workflow-name":         r.Workflow,
		"workflow-displayname":  r.WorkflowDisplayName,
		"workflow-ref":          r.Team + "/" + r.Workflow,
		"workflow-version":      strconv.Itoa(r.WorkflowVersion),
		"taskrun-ref":           t.ID,
		"taskrun-name":          t.Name,
		"taskrun-type":          t.Type,
	}
	for _, k := range []string{"webhook-url", "event-url", "callback-url", "wfe-url", "callback-token"} {
		ctx[k] = ""
	}
	for k, v := range r.Context.Links {
		ctx[k] = v
	}
	ctx["callback-token"] = r.Context.CallbackToken
	sc := params.Scope{Global: r.Context.Global, Team: r.Context.Team, Run: r.Params, Context: ctx, Results: m.S.results}
	sc.Secret.Run = names(r.SecretParams)
	sc.Secret.Results = m.S.secretResults
	for _, n := range r.Context.SecretNames {
		layer, name, _ := strings.Cut(n, ".")
		switch layer {
		case "global":
			sc.Secret.Global = setTrue(sc.Secret.Global, name)
		case "team":
			sc.Secret.Team = setTrue(sc.Secret.Team, name)
		}
	}
	return sc
}

func setTrue(m map[string]bool, name string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[name] = true
	return m
}

// taskParams resolves task v's params, over the defaults of its catalogue task's params,
// and names, sorted, those that came from a secret.
func (m *Machine) taskParams(v int) (map[string]any, []string, error) {
	def := m.S.G.Tasks[v]
	sc := m.Scope(v)
	out := map[string]any{}
	secret := map[string]bool{}
	if def.Spec != nil {
		for _, p := range def.Spec.Params {
			if raw := firstPresent(p.Value, p.Default); raw != nil {
				val, err := decode(raw)
				if err != nil {
					return nil, nil, fmt.Errorf("param '%s': %v", p.Name, err)
				}
				out[p.Name] = val
				secret[p.Name] = p.Type == "password"
			}
		}
	}
	for _, p := range def.Params {
		val, err := decode(p.Value)
		if err != nil {
			return nil, nil, fmt.Errorf("param '%s': %v", p.Name, err)
		}
		val, sec, err := sc.ValueSecret(val)
		if err != nil {
			return nil, nil, err
		}
		out[p.Name], secret[p.Name] = val, sec
	}
	if def.Spec != nil {
		for _, p := range def.Spec.Params {
			_, ok := out[p.Name]
			if !ok && p.Required {
				return nil, nil, fmt.Errorf("param '%s' of task '%s' is required", p.Name, def.TaskRef)
			}
			// Whatever a catalogue task's password parameter is given is a secret.
			if ok && p.Type == "password" {
				secret[p.Name] = true
			}
		}
	}
	// A manual task's form that gives a password field a default or a value holds a
	// secret, which its action keeps sealed and masked: so is the form, as a whole.
	if def.Type == tasktype.Manual {
		for _, name := range []string{"params", "form"} {
			if v, ok := out[name]; ok && FormHoldsSecret(v) {
				secret[name] = true
			}
		}
	}
	var names []string
	for _, n := range slices.Sorted(maps.Keys(secret)) {
		if secret[n] {
			names = append(names, n)
		}
	}
	return out, names, nil
}

// Step is what a runner executes for task i, its references resolved. `$(results.x.path)`
// is left for the runner, which alone knows the path.
func (m *Machine) Step(i int) (StepSpec, error) {
	def := m.S.G.Tasks[i]
	t := m.S.Tasks[i]
	sc := m.Scope(i)
	sc.Task, sc.Secret.Task = t.Params, names(t.SecretParams)
	var spec Spec
	switch def.Type {
	case tasktype.Template:
		if def.Spec == nil {
			return StepSpec{}, fmt.Errorf("catalogue task '%s' was not resolved", def.TaskRef)
		}
		spec = *def.Spec
	case tasktype.Script:
		spec.Script = Text(t.Params["script"])
	case tasktype.Custom:
		spec.Image = Text(t.Params["image"])
		spec.Script = Text(t.Params["script"])
		spec.Command = texts(t.Params["command"])
		spec.Arguments = texts(t.Params["arguments"])
		if envs, ok := t.Params["envs"].([]any); ok {
			for _, e := range envs {
				if kv, ok := e.(map[string]any); ok {
					spec.Envs = append(spec.Envs, EnvVar{Name: Text(kv["name"]), Value: Text(kv["value"])})
				}
			}
		}
	case tasktype.Generic:
		return StepSpec{Queue: Text(t.Params["queue"]), Params: t.Params, Results: def.ResultNames()}, nil
	}
	out := StepSpec{Image: spec.Image, WorkingDir: spec.WorkingDir, Shell: Text(t.Params["shell"]), Results: def.ResultNames()}
	var errs []error
	str := func(s string) string {
		v, err := sc.String(s)
		errs = append(errs, err)
		return v
	}
	out.Script = str(spec.Script)
	for _, c := range spec.Command {
		out.Command = append(out.Command, str(c))
	}
	for _, a := range spec.Arguments {
		out.Args = append(out.Args, str(a))
	}
	for _, e := range spec.Envs {
		out.Env = append(out.Env, EnvVar{Name: e.Name, Value: str(e.Value)})
	}
	if err := errors.Join(errs...); err != nil {
		return StepSpec{}, err
	}
	if out.Script == "" && len(out.Command) == 0 && out.Image == "" {
		return StepSpec{}, fmt.Errorf("task '%s' has nothing to run: give it a script or a command", def.Name)
	}
	return out, nil
}

// StepSpec is a resolved step.
type StepSpec struct {
	Image      string
	Command    []string
	Args       []string
	Script     string
	Shell      string
	WorkingDir string
	Env        []EnvVar
	Results    []string
	// Queue and Params are a generic task's.
	Queue  string
	Params map[string]any
}

func firstPresent(raws ...json.RawMessage) json.RawMessage {
	for _, r := range raws {
		if len(r) > 0 && string(r) != "null" {
			return r
		}
	}
	return nil
}

func decode(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// Text renders a param value as text: strings as they are, other values as JSON.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	default:
		b, _ := json.Marshal(x)
		return string(b)
	}
}

// texts reads a list param: a JSON array of values, or one string.
func texts(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, Text(e))
		}
		return out
	default:
		return []string{Text(x)}
	}
}

func millis(v any) (time.Duration, error) {
	var ms float64
	switch x := v.(type) {
	case float64:
		ms = x
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("want a number of milliseconds, got %q", x)
		}
		ms = f
	default:
		return 0, fmt.Errorf("want a number of milliseconds")
	}
	if ms < 0 {
		return 0, fmt.Errorf("must not be negative")
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}
