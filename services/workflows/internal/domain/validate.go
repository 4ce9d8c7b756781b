package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/paramref"
	"github.com/baton-flow/baton/libs/tasktype"
)

// ProblemKind sorts problems so that a save failing for one kind of reason only can say
// which (API.md §1 keeps v4's specific reasons).
type ProblemKind int

// Problem kinds.
const (
	ProblemGeneral ProblemKind = iota
	// ProblemTaskName: two tasks share a name.
	ProblemTaskName
	// ProblemTaskRef: a taskRef does not resolve to an active catalogue task.
	ProblemTaskRef
)

// Problem is one thing wrong with a workflow, at a field path such as
// "tasks[2].dependencies[0].taskRef".
type Problem struct {
	Field   string
	Message string
	Kind    ProblemKind
}

// Invalid turns problems into the error a save answers: 400 with every problem listed, under
// WORKFLOW_NON_UNIQUE_TASK_NAME or WORKFLOW_INVALID_TASK_REF when all problems are of that
// one kind, else WORKFLOW_INVALID. It returns nil for no problems.
func Invalid(problems []Problem) error {
	if len(problems) == 0 {
		return nil
	}
	reason := apperr.WorkflowInvalid
	switch kind := problems[0].Kind; {
	case !slices.ContainsFunc(problems, func(p Problem) bool { return p.Kind != kind }):
		switch kind {
		case ProblemTaskName:
			reason = apperr.WorkflowNonUniqueTaskName
		case ProblemTaskRef:
			reason = apperr.WorkflowInvalidTaskRef
		}
	}
	fields := make([]apperr.FieldError, len(problems))
	for i, p := range problems {
		fields[i] = apperr.FieldError{Field: p.Field, Message: p.Message}
	}
	msg := fmt.Sprintf("The workflow is invalid: %s: %s", problems[0].Field, problems[0].Message)
	if len(problems) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	return apperr.Invalid(reason, msg, fields...)
}

// ValidateOptions says where a definition lives.
type ValidateOptions struct {
	// Team owns the workflow; empty for templates, which may use global tasks only.
	Team string
}

// Validate checks everything about w that needs no other service: fields, task types and
// their params, the DAG (one start, one end, no cycles, every task on a path from start to
// end), dependency names, references and decision patterns. Task references are checked
// for form here and resolved by the caller (CheckTask).
func Validate(w *Workflow, opts ValidateOptions) []Problem {
	v := &validator{w: w, opts: opts}
	v.fields()
	v.params()
	v.triggers()
	v.tasks()
	v.graph()
	v.references()
	return v.problems
}

type validator struct {
	w        *Workflow
	opts     ValidateOptions
	problems []Problem
	// byName indexes tasks by name; names used twice point at the first.
	byName map[string]int
	// up lists, per task, the indexes of its valid upstream tasks.
	up [][]int
}

func (v *validator) add(kind ProblemKind, field, format string, args ...any) {
	v.problems = append(v.problems, Problem{Field: field, Message: fmt.Sprintf(format, args...), Kind: kind})
}

func (v *validator) fields() {
	w := v.w
	if w.Status != "" && !w.Status.Valid() {
		v.add(ProblemGeneral, "status", "must be active or inactive, not '%s'", w.Status)
	}
	if w.Timeout != nil && *w.Timeout < 0 {
		v.add(ProblemGeneral, "timeout", "must not be negative")
	}
	if w.Retries != nil && *w.Retries < 0 {
		v.add(ProblemGeneral, "retries", "must not be negative")
	}
	for _, k := range slices.Sorted(maps.Keys(w.Labels)) {
		if err := names.CheckLabelKey(k); err != nil {
			v.add(ProblemGeneral, "labels", "%s", err.Error())
		}
	}
}

func (v *validator) params() {
	seen := map[string]bool{}
	for i, p := range v.w.Params {
		field := fmt.Sprintf("params[%d]", i)
		switch {
		case strings.TrimSpace(p.Name) == "":
			v.add(ProblemGeneral, field+".name", "is required")
		case seen[p.Name]:
			v.add(ProblemGeneral, field+".name", "another parameter is called '%s'", p.Name)
		}
		seen[p.Name] = true
		if p.Type != "" && !slices.Contains(ParamTypes, p.Type) {
			v.add(ProblemGeneral, field+".type", "unknown type '%s': want one of %s", p.Type, strings.Join(ParamTypes, ", "))
		}
	}
}

func (v *validator) triggers() {
	t := v.w.Triggers
	if t == nil {
		return
	}
	for _, tr := range []struct {
		name string
		t    *Trigger
	}{{"manual", t.Manual}, {"schedule", t.Schedule}, {"webhook", t.Webhook}, {"event", t.Event}, {"codehost", t.CodehostTrigger()}} {
		if tr.t == nil {
			continue
		}
		for i, c := range tr.t.Conditions {
			field := fmt.Sprintf("triggers.%s.conditions[%d]", tr.name, i)
			if strings.TrimSpace(c.Field) == "" {
				v.add(ProblemGeneral, field+".field", "is required: a JSONPath into the payload")
			}
			switch c.Operation {
			case "matches":
				if _, err := regexp.Compile(c.Value); err != nil {
					v.add(ProblemGeneral, field+".value", "is not a valid RE2 pattern: %v", err)
				}
			case "equals", "in":
			default:
				v.add(ProblemGeneral, field+".operation", "must be one of %s, not '%s'",
					strings.Join(ConditionOperations, ", "), c.Operation)
			}
		}
	}
}

func (v *validator) tasks() {
	tasks := v.w.Tasks
	v.byName = make(map[string]int, len(tasks))
	for i, t := range tasks {
		field := fmt.Sprintf("tasks[%d]", i)
		if strings.TrimSpace(t.Name) == "" {
			v.add(ProblemGeneral, field+".name", "is required")
		} else if first, dup := v.byName[t.Name]; dup {
			v.add(ProblemTaskName, field+".name", "tasks[%d] is also called '%s': task names must be unique", first, t.Name)
		} else {
			v.byName[t.Name] = i
		}
		v.task(field, t)
	}
	var starts, ends []int
	for i, t := range tasks {
		switch t.Type {
		case tasktype.Start:
			starts = append(starts, i)
		case tasktype.End:
			ends = append(ends, i)
		}
	}
	for _, c := range []struct {
		typ   string
		found []int
	}{{tasktype.Start, starts}, {tasktype.End, ends}} {
		if len(c.found) != 1 {
			v.add(ProblemGeneral, "tasks", "a workflow needs exactly one task of type '%s', found %d", c.typ, len(c.found))
		}
	}
	for _, i := range starts {
		if len(tasks[i].Dependencies) > 0 {
			v.add(ProblemGeneral, fmt.Sprintf("tasks[%d].dependencies", i), "the start task cannot depend on other tasks")
		}
	}
}

// task checks one task's own fields: its type and params, and the form of its edges.
func (v *validator) task(field string, t Task) {
	typ, known := TaskTypes[t.Type]
	if !known {
		v.add(ProblemGeneral, field+".type", "unknown task type '%s': want one of %s", t.Type, strings.Join(TaskTypeNames(), ", "))
	}
	if t.Join != "" && t.Join != JoinAll && t.Join != JoinAny {
		v.add(ProblemGeneral, field+".join", "must be all or any, not '%s'", t.Join)
	}
	for _, f := range []struct {
		name string
		n    *int
	}{{"timeout", t.Timeout}, {"retries", t.Retries}, {"retryDelay", t.RetryDelay}} {
		if f.n != nil && *f.n < 0 {
			v.add(ProblemGeneral, field+"."+f.name, "must not be negative")
		}
	}
	if t.TaskVersion != nil && *t.TaskVersion < 1 {
		v.add(ProblemGeneral, field+".taskVersion", "must be 1 or more")
	}
	for _, k := range slices.Sorted(maps.Keys(t.Labels)) {
		if err := names.CheckLabelKey(k); err != nil {
			v.add(ProblemGeneral, field+".labels", "%s", err.Error())
		}
	}
	if t.TaskRef != "" {
		if owner, _, ok := strings.Cut(t.TaskRef, "/"); ok && owner != v.opts.Team {
			msg := "may name a global task or a task of team '" + v.opts.Team + "' only"
			if v.opts.Team == "" {
				msg = "templates may use global tasks only"
			}
			v.add(ProblemTaskRef, field+".taskRef", "'%s' %s", t.TaskRef, msg)
		}
	}
	seen := map[string]bool{}
	for j, p := range t.Params {
		if p.Name == "" {
			v.add(ProblemGeneral, fmt.Sprintf("%s.params[%d].name", field, j), "is required")
		} else if seen[p.Name] {
			v.add(ProblemGeneral, fmt.Sprintf("%s.params[%d].name", field, j), "the task already has a parameter '%s'", p.Name)
		}
		seen[p.Name] = true
	}
	if known {
		v.typeParams(field, t, typ)
	}
	for j, d := range t.Dependencies {
		df := fmt.Sprintf("%s.dependencies[%d]", field, j)
		switch d.ExecutionCondition {
		case "", ConditionAlways, ConditionSuccess, ConditionFailure:
		default:
			v.add(ProblemGeneral, df+".executionCondition", "must be always, success or failure, not '%s'", d.ExecutionCondition)
		}
		for _, line := range strings.Split(d.DecisionCondition, "\n") {
			if line == "" {
				continue
			}
			if _, err := regexp.Compile(line); err != nil {
				v.add(ProblemGeneral, df+".decisionCondition", "'%s' is not a valid RE2 pattern: %v", line, err)
			}
		}
	}
}

func (v *validator) typeParams(field string, t Task, typ TaskType) {
	if typ.NeedsTaskRef && t.TaskRef == "" {
		v.add(ProblemTaskRef, field+".taskRef", "a %s task must name the catalogue task it runs", t.Type)
	}
	for _, names := range typ.Required {
		if val, _ := t.Param(names...); !nonEmpty(val) {
			v.add(ProblemGeneral, field+".params", "a %s task needs a value for '%s'", t.Type, names[0])
		}
	}
	if len(typ.OneOf) > 0 && !slices.ContainsFunc(typ.OneOf, func(n string) bool {
		val, _ := t.Param(n)
		return nonEmpty(val)
	}) {
		v.add(ProblemGeneral, field+".params", "a %s task needs a value for one of %s", t.Type, strings.Join(typ.OneOf, ", "))
	}
	for name, allowed := range typ.Values {
		val, ok := t.Param(name)
		var s string
		if !ok || json.Unmarshal(val, &s) != nil || strings.Contains(s, "$(") || s == "" {
			continue // references and non-strings are checked when the task runs
		}
		if !slices.Contains(allowed, s) {
			v.add(ProblemGeneral, field+".params", "'%s' of a %s task must be one of %s, not '%s'",
				name, t.Type, strings.Join(allowed, ", "), s)
		}
	}
}

// graph checks the edges: dependencies name tasks of the workflow, there is no cycle, and
// every task lies on a path from start to end.
func (v *validator) graph() {
	tasks := v.w.Tasks
	n := len(tasks)
	v.up = make([][]int, n)
	down := make([][]int, n)
	for i, t := range tasks {
		seen := map[string]bool{}
		for j, d := range t.Dependencies {
			field := fmt.Sprintf("tasks[%d].dependencies[%d].taskRef", i, j)
			u, ok := v.byName[d.TaskRef]
			switch {
			case d.TaskRef == "":
				v.add(ProblemGeneral, field, "is required: the name of the upstream task")
				continue
			case !ok:
				v.add(ProblemGeneral, field, "no task named '%s'", d.TaskRef)
				continue
			case seen[d.TaskRef]:
				v.add(ProblemGeneral, field, "the task already depends on '%s'", d.TaskRef)
				continue
			}
			seen[d.TaskRef] = true
			v.up[i] = append(v.up[i], u)
			down[u] = append(down[u], i)
		}
	}
	for _, cycle := range cycles(v.up) {
		names := make([]string, len(cycle))
		for k, i := range cycle {
			names[k] = tasks[i].Name
		}
		v.add(ProblemGeneral, fmt.Sprintf("tasks[%d].dependencies", cycle[0]), "tasks %s form a cycle", strings.Join(names, " → "))
	}
	start, end := v.single(tasktype.Start), v.single(tasktype.End)
	if start < 0 || end < 0 {
		return // reachability means nothing without exactly one of each
	}
	fromStart := reach(start, down)
	toEnd := reach(end, v.up)
	for i, t := range tasks {
		if first, ok := v.byName[t.Name]; !ok || first != i {
			continue // a duplicate name, reported already; edges to it are ambiguous
		}
		if !fromStart[i] {
			v.add(ProblemGeneral, fmt.Sprintf("tasks[%d]", i), "task '%s' cannot be reached from the start task", t.Name)
		}
		if !toEnd[i] {
			v.add(ProblemGeneral, fmt.Sprintf("tasks[%d]", i), "task '%s' cannot reach the end task", t.Name)
		}
	}
}

func (v *validator) single(typ string) int {
	found := -1
	for i, t := range v.w.Tasks {
		if t.Type == typ {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// reach returns the nodes reachable from n along edges.
func reach(n int, edges [][]int) []bool {
	seen := make([]bool, len(edges))
	seen[n] = true
	stack := []int{n}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, next := range edges[cur] {
			if !seen[next] {
				seen[next] = true
				stack = append(stack, next)
			}
		}
	}
	return seen
}

// cycles returns the strongly connected components that form cycles (Tarjan, iterative so
// a 10,000-task chain does not grow the stack), each in a stable order.
func cycles(edges [][]int) [][]int {
	n := len(edges)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var out [][]int
	var sccStack []int
	next := 0
	type frame struct{ node, edge int }
	for root := range n {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		sccStack = append(sccStack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.edge < len(edges[f.node]) {
				w := edges[f.node][f.edge]
				f.edge++
				switch {
				case index[w] < 0:
					index[w], low[w] = next, next
					next++
					sccStack = append(sccStack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				case onStack[w]:
					low[f.node] = min(low[f.node], index[w])
				}
				continue
			}
			node := f.node
			call = call[:len(call)-1]
			if len(call) > 0 {
				parent := call[len(call)-1].node
				low[parent] = min(low[parent], low[node])
			}
			if low[node] != index[node] {
				continue
			}
			var scc []int
			for {
				w := sccStack[len(sccStack)-1]
				sccStack = sccStack[:len(sccStack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == node {
					break
				}
			}
			if len(scc) > 1 || slices.Contains(edges[node], node) {
				slices.Sort(scc)
				out = append(out, scc)
			}
		}
	}
	slices.SortFunc(out, func(a, b []int) int { return a[0] - b[0] })
	return out
}

// references checks every `$(…)` with a known prefix in task params: well formed, and
// `tasks.<t>.results.<r>` only for tasks upstream of the one using it.
func (v *validator) references() {
	ancestors := map[int][]bool{}
	for i, t := range v.w.Tasks {
		for j, p := range t.Params {
			if !bytes.Contains(p.Value, []byte("$(")) {
				continue
			}
			field := fmt.Sprintf("tasks[%d].params[%d].value", i, j)
			for _, s := range jsonStrings(p.Value) {
				refs, problems := FindRefs(s)
				for _, msg := range problems {
					v.add(ProblemGeneral, field, "%s", msg)
				}
				for _, r := range refs {
					if r.Prefix != paramref.Tasks {
						continue
					}
					u, ok := v.byName[r.Task]
					if !ok {
						v.add(ProblemGeneral, field, "reference to results of '%s': no task has that name", r.Task)
						continue
					}
					anc, done := ancestors[i]
					if !done {
						anc = reach(i, v.up)
						ancestors[i] = anc
					}
					if u == i || !anc[u] {
						v.add(ProblemGeneral, field, "reference to results of '%s': only results of upstream tasks can be used", r.Task)
					}
				}
			}
		}
	}
}

// jsonStrings returns the strings inside a JSON value, at any depth.
func jsonStrings(raw json.RawMessage) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TaskDefinition is a catalogue task version, as the tasks service resolves a taskRef.
type TaskDefinition struct {
	Name    string
	Version int
	Status  string
	Type    string
	Params  []Param
	Results []string
}

// CheckTask checks task i against the catalogue task its taskRef resolved to: it must be
// active, and every param the task requires without a default must be given.
func CheckTask(i int, t Task, def TaskDefinition) []Problem {
	var out []Problem
	field := fmt.Sprintf("tasks[%d]", i)
	if def.Status != "" && def.Status != string(StatusActive) {
		out = append(out, Problem{Field: field + ".taskRef", Kind: ProblemTaskRef,
			Message: fmt.Sprintf("task '%s' version %d is %s: only active task versions can be used", t.TaskRef, def.Version, def.Status)})
	}
	if t.TaskRef == tasktype.CatalogueTask(t.Type) {
		// The catalogue task of the task's own type, as workflows answer a task that names
		// none: its params are the type's, which Validate checks with their aliases.
		return out
	}
	for _, p := range def.Params {
		if !p.Required || nonEmpty(p.Default) {
			continue
		}
		if val, _ := t.Param(p.Name); !nonEmpty(val) {
			out = append(out, Problem{Field: field + ".params", Kind: ProblemGeneral,
				Message: fmt.Sprintf("task '%s' requires a value for '%s'", t.TaskRef, p.Name)})
		}
	}
	return out
}

// UnknownTask is the problem of a taskRef the catalogue does not have.
func UnknownTask(i int, t Task) Problem {
	msg := fmt.Sprintf("no task '%s' in the catalogue", t.TaskRef)
	if t.TaskVersion != nil {
		msg = fmt.Sprintf("no version %d of task '%s' in the catalogue", *t.TaskVersion, t.TaskRef)
	}
	return Problem{Field: fmt.Sprintf("tasks[%d].taskRef", i), Message: msg, Kind: ProblemTaskRef}
}
