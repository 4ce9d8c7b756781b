package domain

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/baton-flow/baton/libs/tasktype"
)

// task builds a TaskDef: deps are "name", "name:success", "name:failure" or
// "name:always:pattern".
func task(name, typ string, params map[string]any, deps ...string) TaskDef {
	t := TaskDef{Name: name, Type: typ}
	for k, v := range params {
		raw, _ := json.Marshal(v)
		t.Params = append(t.Params, TaskParam{Name: k, Value: raw})
	}
	for _, d := range deps {
		parts := strings.SplitN(d, ":", 3)
		dep := Dependency{TaskRef: parts[0]}
		if len(parts) > 1 {
			dep.ExecutionCondition = parts[1]
		}
		if len(parts) > 2 {
			dep.DecisionCondition = parts[2]
		}
		t.Dependencies = append(t.Dependencies, dep)
	}
	return t
}

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func started(t *testing.T, def *Definition, params map[string]any) (*State, *Machine) {
	t.Helper()
	def.Name = "wf"
	r, tasks, err := NewRun("r1", def, SubmitRequest{Params: params}, "manual", Initiator{}, t0, Limits{MaxDuration: 60, TaskDefaultTimeout: 10})
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	s, err := NewState(r, tasks)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	m := NewMachine(s, t0)
	if err := m.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return s, m
}

func statuses(s *State) string {
	var b []string
	for _, t := range s.Tasks {
		b = append(b, t.Name+"="+string(t.Status))
	}
	return strings.Join(b, " ")
}

func TestMachineInline(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		tasks  []TaskDef
		params map[string]any
		want   string
		run    Status
	}{
		{
			name: "chain of setwfproperty",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("a", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "$(params.p)"}, "start"),
				task("b", tasktype.SetWFProperty, map[string]any{"output": "y", "value": "$(tasks.a.results.x)-b"}, "a"),
				task("end", tasktype.End, nil, "b"),
			},
			params: map[string]any{"p": "hello"},
			want:   "start=succeeded a=succeeded b=succeeded end=succeeded",
			run:    Succeeded,
		},
		{
			name: "decision picks a branch, default branch skipped",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("d", tasktype.Decision, map[string]any{"value": "blue"}, "start"),
				task("blue", tasktype.SetWFProperty, map[string]any{"output": "c", "value": "b"}, "d:always:bl.*"),
				task("other", tasktype.SetWFProperty, map[string]any{"output": "c", "value": "o"}, "d"),
				task("end", tasktype.End, nil, "blue", "other"),
			},
			want: "start=succeeded d=succeeded blue=succeeded other=skipped end=succeeded",
			run:  Succeeded,
		},
		{
			name: "decision without a match takes the default branch",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("d", tasktype.Decision, map[string]any{"value": "red"}, "start"),
				task("blue", tasktype.SetWFProperty, map[string]any{"output": "c", "value": "b"}, "d:always:blue"),
				task("other", tasktype.SetWFProperty, map[string]any{"output": "c", "value": "o"}, "d"),
				task("end", tasktype.End, nil, "blue", "other"),
			},
			want: "start=succeeded d=succeeded blue=skipped other=succeeded end=succeeded",
			run:  Succeeded,
		},
		{
			name: "invalid reference fails the task and skips what needs its success",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("a", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "$(params.missing)"}, "start"),
				task("b", tasktype.SetWFProperty, map[string]any{"output": "y", "value": "1"}, "a:success"),
				task("onfail", tasktype.SetWFProperty, map[string]any{"output": "z", "value": "1"}, "a:failure"),
				task("end", tasktype.End, nil, "b"),
			},
			want: "start=succeeded a=invalid b=skipped onfail=succeeded end=skipped",
			run:  Failed,
		},
		{
			name: "join all needs every edge; skipped upstream keeps always edges",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("a", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "1"}, "start"),
				task("b", tasktype.SetWFProperty, map[string]any{"output": "y", "value": "1"}, "a:failure"),
				task("c", tasktype.SetWFProperty, map[string]any{"output": "z", "value": "1"}, "a", "b"),
				task("end", tasktype.End, nil, "c"),
			},
			want: "start=succeeded a=succeeded b=skipped c=succeeded end=succeeded",
			run:  Succeeded,
		},
		{
			name: "reached only through skipped upstreams is skipped",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("a", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "1"}, "start"),
				task("b", tasktype.SetWFProperty, map[string]any{"output": "y", "value": "1"}, "a:failure"),
				task("c", tasktype.SetWFProperty, map[string]any{"output": "z", "value": "1"}, "b"),
				task("end", tasktype.End, nil, "a", "c"),
			},
			want: "start=succeeded a=succeeded b=skipped c=skipped end=succeeded",
			run:  Succeeded,
		},
		{
			name: "setwfstatus overrides",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("s", tasktype.SetWFStatus, map[string]any{"status": "failed"}, "start"),
				task("end", tasktype.End, nil, "s"),
			},
			want: "start=succeeded s=succeeded end=succeeded",
			run:  Failed,
		},
		{
			name: "unsupported type ends invalid",
			tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("ok", "nosuchtype", nil, "start"),
				task("end", tasktype.End, nil, "ok"),
			},
			want: "start=succeeded ok=invalid end=succeeded",
			run:  Failed,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := started(t, &Definition{Tasks: tt.tasks}, tt.params)
			if got := statuses(s); got != tt.want {
				t.Errorf("tasks:\n got %s\nwant %s", got, tt.want)
			}
			if s.Run.Status != tt.run || s.Run.Phase != Completed {
				t.Errorf("run = %s/%s (%s), want %s/completed", s.Run.Status, s.Run.Phase, s.Run.StatusMessage, tt.run)
			}
		})
	}
}

func TestMachineRunnerTaskRetriesAndTimeouts(t *testing.T) {
	t.Parallel()
	retries, delay := 1, 2
	def := &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		{Name: "s", Type: tasktype.Script, Retries: &retries, RetryDelay: &delay,
			Params:       []TaskParam{{Name: "script", Value: json.RawMessage(`"echo $(params.who) > $(results.out.path)"`)}},
			Dependencies: []Dependency{{TaskRef: "start"}}, Results: json.RawMessage(`["out"]`)},
		task("end", tasktype.End, nil, "s"),
	}}
	s, m := started(t, def, map[string]any{"who": "me"})
	if got := m.Effects().Dispatch; len(got) != 1 || got[0] != 1 {
		t.Fatalf("dispatch = %v", got)
	}
	step, err := m.Step(1)
	if err != nil || step.Script != "echo me > $(results.out.path)" {
		t.Fatalf("step = %+v, %v", step, err)
	}
	m = NewMachine(s, t0.Add(time.Second))
	if !m.Claim(1, 1, "r-a") || m.Claim(1, 1, "r-b") {
		t.Fatal("claim must succeed once")
	}
	if m = NewMachine(s, t0.Add(time.Second)); !m.Claim(1, 1, "r-a") || len(m.Changed()) > 0 {
		t.Fatal("the holder's claim asked again is granted, changing nothing")
	}
	m = NewMachine(s, t0.Add(2*time.Second))
	m.Ended(1, 1, Failed, "exit code 1", nil, nil)
	if tr := s.Tasks[1]; tr.Status != Waiting || !tr.WakeAt.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("after a failed attempt: %s wake %v", tr.Status, tr.WakeAt)
	}
	m = NewMachine(s, t0.Add(4*time.Second))
	m.Tick(HeartbeatLease)
	if tr := s.Tasks[1]; tr.Status != Ready || tr.Attempt != 2 {
		t.Fatalf("retry: %s attempt %d", tr.Status, tr.Attempt)
	}
	if m.Ended(1, 1, Succeeded, "", nil, nil) {
		t.Fatal("a stale attempt's report must be ignored")
	}
	m = NewMachine(s, t0.Add(5*time.Second))
	m.Claim(1, 2, "r-a")
	// The runner goes silent: its attempt is lost, and no retries are left.
	m = NewMachine(s, t0.Add(5*time.Second+HeartbeatLease+time.Second))
	m.Tick(HeartbeatLease)
	if s.Tasks[1].Status != Failed || s.Run.Status != Failed {
		t.Fatalf("lost runner: task %s run %s", s.Tasks[1].Status, s.Run.Status)
	}
}

func TestMachineCancelAndRunTimeout(t *testing.T) {
	t.Parallel()
	def := func() *Definition {
		return &Definition{Tasks: []TaskDef{
			task("start", tasktype.Start, nil),
			task("nap", tasktype.Sleep, map[string]any{"duration": 60000}, "start"),
			task("after", tasktype.SetWFProperty, map[string]any{"output": "x", "value": "1"}, "nap"),
			task("end", tasktype.End, nil, "after"),
		}}
	}
	s, m := started(t, def(), nil)
	if s.Tasks[1].Status != Waiting {
		t.Fatalf("sleep: %s", s.Tasks[1].Status)
	}
	if err := m.Cancel("stop"); err != nil {
		t.Fatal(err)
	}
	if got, want := statuses(s), "start=succeeded nap=cancelled after=skipped end=skipped"; got != want {
		t.Errorf("cancel: %s, want %s", got, want)
	}
	if err := m.Cancel("again"); err == nil {
		t.Error("cancelling an ended run must fail")
	}

	s, _ = started(t, def(), nil)
	m = NewMachine(s, t0.Add(61*time.Minute))
	if next := m.NextWake(0); !next.Equal(t0.Add(time.Minute)) {
		t.Errorf("next wake %v", next)
	}
	m.Tick(0)
	if s.Run.Status != TimedOut {
		t.Errorf("run after its deadline: %s", s.Run.Status)
	}
}

func TestFanOutJoin(t *testing.T) {
	t.Parallel()
	tasks := []TaskDef{task("start", tasktype.Start, nil)}
	var deps []string
	for i := range 1000 {
		name := "t" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + itoaTest(i)
		tasks = append(tasks, task(name, tasktype.SetWFProperty, map[string]any{"output": name, "value": "1"}, "start"))
		deps = append(deps, name)
	}
	tasks = append(tasks, task("join", tasktype.SetWFProperty, map[string]any{"output": "j", "value": "1"}, deps...))
	tasks = append(tasks, task("end", tasktype.End, nil, "join"))
	s, _ := started(t, &Definition{Tasks: tasks}, nil)
	if s.Run.Status != Succeeded || len(s.Run.Results) != 1001 {
		t.Fatalf("run %s with %d results", s.Run.Status, len(s.Run.Results))
	}
}

func itoaTest(i int) string { b, _ := json.Marshal(i); return string(b) }

// A cancel whose run end was stored but not all its tasks' is finished on reload as the
// cancel would have, not read as a failure.
func TestRecoverEndsAStoppedRunsTasks(t *testing.T) {
	t.Parallel()
	s, m := started(t, &Definition{Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("nap", tasktype.Sleep, map[string]any{"duration": 60000}, "start"),
		task("end", tasktype.End, nil, "nap"),
	}}, nil)
	require := func(ok bool, msg string) {
		t.Helper()
		if !ok {
			t.Fatal(msg)
		}
	}
	_ = m
	s.Run.Status, s.Run.Phase, s.Run.StatusMessage = Cancelled, Completed, "cancelled by Olive"
	reloaded, err := NewState(s.Run, s.Tasks)
	require(err == nil, "reload")
	NewMachine(reloaded, t0).Recover()
	require(statuses(reloaded) == "start=succeeded nap=cancelled end=skipped", statuses(reloaded))
	require(reloaded.Run.Status == Cancelled, string(reloaded.Run.Status))
}

// Results count against a run's 1 MiB of params and results as they accumulate: the task
// whose results would cross it fails, and its results are not kept.
func TestResultsWithinTheRunsValues(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", MaxResultBytes-100)
	tests := []struct {
		name    string
		params  int // bytes of params the run starts with
		wantErr bool
	}{
		{name: "room left", params: 1000},
		{name: "crossing the limit", params: MaxRunValuesBytes - MaxResultBytes/2, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := &Definition{Tasks: []TaskDef{
				task("start", tasktype.Start, nil),
				task("build", tasktype.Script, map[string]any{"script": "true"}, "start"),
				task("end", tasktype.End, nil, "build"),
			}}
			s, m := started(t, def, map[string]any{"blob": strings.Repeat("p", tt.params)})
			if !m.Claim(1, 1, "r1") {
				t.Fatal("claim refused")
			}
			m = NewMachine(s, t0)
			if !m.Ended(1, 1, Succeeded, "", map[string]string{"out": big}, nil) {
				t.Fatal("report refused")
			}
			build := s.Tasks[1]
			if tt.wantErr {
				if build.Status != Failed || !strings.Contains(build.StatusMessage, "a run may hold at most 1048576") || build.Results != nil {
					t.Fatalf("build = %s %q, results kept: %v", build.Status, build.StatusMessage, build.Results != nil)
				}
				return
			}
			if build.Status != Succeeded || s.values < MaxResultBytes-100 {
				t.Fatalf("build = %s %q; values %d", build.Status, build.StatusMessage, s.values)
			}
		})
	}
}

// What a task makes of a secret is named secret by where it came from — params, results,
// the run's results, a decision's value — and no status message shows it.
func TestSecretProvenance(t *testing.T) {
	t.Parallel()
	def := &Definition{Name: "wf", Tasks: []TaskDef{
		task("start", tasktype.Start, nil),
		task("d", tasktype.Decision, map[string]any{"value": "$(team.params.pw)", "plain": "$(team.params.region)"}, "start"),
		task("set", tasktype.SetWFProperty, map[string]any{"output": "out", "value": "x $(params.pw)"}, "d"),
		task("plain", tasktype.SetWFProperty, map[string]any{"output": "region", "value": "$(params.region)"}, "set"),
		task("bad", tasktype.SetWFStatus, map[string]any{"status": "$(global.params.gpw)"}, "plain"),
		task("end", tasktype.End, nil, "bad"),
	}}
	r, tasks, err := NewRun("r1", def, SubmitRequest{}, "manual", Initiator{}, t0, Limits{MaxDuration: 60})
	if err != nil {
		t.Fatal(err)
	}
	r.Context = RunContext{Global: map[string]any{"gpw": "g-secret"}, Team: map[string]any{"pw": "t-secret", "region": "eu"},
		SecretNames: []string{"global.gpw", "team.pw"}, Secrets: []string{"g-secret", "t-secret"}}
	s, err := NewState(r, tasks)
	if err != nil {
		t.Fatal(err)
	}
	if err := NewMachine(s, t0).Start(); err != nil {
		t.Fatal(err)
	}
	byName := map[string]*TaskRun{}
	for _, tr := range s.Tasks {
		byName[tr.Name] = tr
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"decision params", byName["d"].SecretParams, []string{"value"}},
		{"decision value", byName["d"].SecretDecision(), true},
		{"setwfproperty params", byName["set"].SecretParams, []string{"value"}},
		{"setwfproperty results", byName["set"].SecretResults, []string{"out"}},
		{"run results", r.SecretResults, []string{"out"}},
		{"plain params", byName["plain"].SecretParams, []string(nil)},
		{"plain results", byName["plain"].SecretResults, []string(nil)},
		{"setwfstatus", byName["bad"].Status, Invalid},
		{"message", strings.Contains(byName["bad"].StatusMessage+r.StatusMessage, "g-secret"), false},
		{"message masked", strings.Contains(byName["bad"].StatusMessage, `"********"`), true},
	}
	for _, tt := range tests {
		if !equalJSON(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// A child run is recorded only while its runworkflow task still waits for it; otherwise
// ChildStarted says so, for the engine to cancel the child.
func TestChildStartedOnlyWhileWanted(t *testing.T) {
	t.Parallel()
	def := func() *Definition {
		return &Definition{Tasks: []TaskDef{
			task("start", tasktype.Start, nil),
			task("kid", tasktype.RunWorkflow, map[string]any{"workflowRef": "child"}, "start"),
			task("end", tasktype.End, nil, "kid"),
		}}
	}
	tests := []struct {
		name   string
		before func(m *Machine)
		child  string
		want   bool
		status Status // the task's after the call
	}{
		{"recorded", func(*Machine) {}, "c1", true, Running},
		{"the same child again", func(m *Machine) { m.ChildStarted(1, 1, "c1", true) }, "c1", true, Running},
		{"another child of the attempt", func(m *Machine) { m.ChildStarted(1, 1, "c1", true) }, "c2", false, Running},
		{"the run was cancelled", func(m *Machine) { _ = m.Cancel("stop") }, "c1", false, Cancelled},
		{"the attempt is over", func(m *Machine) { m.Fail(1, Failed, "gone") }, "c1", false, Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, m := started(t, def(), nil)
			tt.before(m)
			if got := m.ChildStarted(1, 1, tt.child, true); got != tt.want {
				t.Fatalf("ChildStarted = %v, want %v", got, tt.want)
			}
			if s.Tasks[1].Status != tt.status {
				t.Fatalf("task %s, want %s", s.Tasks[1].Status, tt.status)
			}
		})
	}
}

// A child run's depth and lineage follow its parent's; a retry keeps the depth but starts
// a tree of its own.
func TestLineageAndRetryDepth(t *testing.T) {
	t.Parallel()
	root := &Run{ID: "a"}
	child := &Run{ID: "b", Ancestors: root.Lineage(), Depth: 1}
	grandchild := &Run{ID: "c", Ancestors: child.Lineage(), Depth: 2}
	if got := strings.Join(grandchild.Ancestors, ","); got != "a,b" {
		t.Fatalf("ancestors %s, want a,b", got)
	}
	if root.Root() != "a" || grandchild.Root() != "a" {
		t.Fatalf("roots %s %s, want a", root.Root(), grandchild.Root())
	}
	// Lineage must not share the parent's array: siblings would overwrite each other.
	left, right := child.Lineage(), child.Lineage()
	left[len(left)-1] = "x"
	if right[len(right)-1] != "b" {
		t.Fatal("lineages share their array")
	}

	def := &Definition{Name: "wf", Tasks: []TaskDef{task("start", tasktype.Start, nil), task("end", tasktype.End, nil, "start")}}
	old, tasks, err := NewRun("c", def, SubmitRequest{}, "task", Initiator{}, t0, Limits{MaxDuration: 60})
	if err != nil {
		t.Fatal(err)
	}
	old.Ancestors, old.Depth, old.ParentRun, old.Definition = []string{"a", "b"}, 2, "b", def
	old.Status, old.Phase = Cancelled, Completed
	retry, _, err := NewRetry("d", old, tasks, SubmitRequest{}, true, Initiator{}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if retry.Depth != 2 || len(retry.Ancestors) != 0 || retry.Root() != "d" || retry.ParentRun != "b" {
		t.Fatalf("retry depth %d ancestors %v root %s parent %s", retry.Depth, retry.Ancestors, retry.Root(), retry.ParentRun)
	}
}
