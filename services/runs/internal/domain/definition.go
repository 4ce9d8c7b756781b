package domain

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/tasktype"
)

// Definition is the workflow version a run runs: the part of the workflow document the
// engine reads. The whole document is kept beside it, as the workflows service sent it.
type Definition struct {
	Name        string          `json:"name"`
	DisplayName string          `json:"displayName,omitempty"`
	Team        string          `json:"team,omitempty"`
	Status      string          `json:"status,omitempty"`
	Version     int             `json:"version,omitempty"`
	Timeout     *int            `json:"timeout,omitempty"`
	Retries     *int            `json:"retries,omitempty"`
	Params      []Param         `json:"params,omitempty"`
	Workspaces  json.RawMessage `json:"workspaces,omitempty"`
	Triggers    map[string]struct {
		Enabled bool `json:"enabled"`
	} `json:"triggers,omitempty"`
	Tasks []TaskDef `json:"tasks,omitempty"`
}

// Param is a workflow or task parameter, the contract's AbstractParam: the workflows and
// tasks services' documents are read with the one declaration they are written with, v4's
// names (`key`, `defaultValue`) included.
type Param = param.Param

// TaskDef is a task of the definition.
type TaskDef struct {
	Name         string            `json:"name"`
	Type         string            `json:"type"`
	TaskRef      string            `json:"taskRef,omitempty"`
	TaskVersion  *int              `json:"taskVersion,omitempty"`
	Timeout      *int              `json:"timeout,omitempty"`
	Retries      *int              `json:"retries,omitempty"`
	RetryDelay   *int              `json:"retryDelay,omitempty"`
	Join         string            `json:"join,omitempty"`
	Dependencies []Dependency      `json:"dependencies,omitempty"`
	Params       []TaskParam       `json:"params,omitempty"`
	Results      json.RawMessage   `json:"results,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"`
	// Spec is the catalogue task's spec of a template task, resolved at submit.
	Spec *Spec `json:"spec,omitempty"`
}

// TaskParam is a value given to a task's parameter.
type TaskParam struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
}

// Dependency is an edge of the DAG.
type Dependency struct {
	TaskRef            string `json:"taskRef"`
	ExecutionCondition string `json:"executionCondition,omitempty"`
	DecisionCondition  string `json:"decisionCondition,omitempty"`
}

// Spec is a catalogue task's step.
type Spec struct {
	Image      string     `json:"image,omitempty"`
	Command    []string   `json:"command,omitempty"`
	Arguments  []string   `json:"arguments,omitempty"`
	Script     string     `json:"script,omitempty"`
	WorkingDir string     `json:"workingDir,omitempty"`
	Envs       []EnvVar   `json:"envs,omitempty"`
	Params     []Param    `json:"params,omitempty"`
	Results    []NamedRef `json:"results,omitempty"`
}

// EnvVar is an environment variable of a step.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NamedRef is a declared result.
type NamedRef struct {
	Name string `json:"name"`
}

// RunsOnRunner reports whether tasks of type t are executed by a runner.
func RunsOnRunner(t string) bool {
	return t == tasktype.Template || t == tasktype.Custom || t == tasktype.Script
}

// Execution conditions and joins.
const (
	Always  = "always"
	Success = "success"
	Failure = "failure"
	JoinAll = "all"
	JoinAny = "any"
)

// Edge is a dependency seen from both ends.
type Edge struct {
	From, To int
	// Exec is always, success or failure.
	Exec string
	// Decision holds the compiled decisionCondition patterns (full match); nil when none.
	Decision []*regexp.Regexp
}

// Graph is a definition's DAG, indexed both ways.
type Graph struct {
	Tasks      []TaskDef
	Index      map[string]int
	In, Out    [][]Edge
	Start, End int
	// Any marks the tasks that join with `any`.
	Any []bool
}

// NewGraph indexes def's tasks and checks what the engine relies on: one start, one end,
// known dependencies, valid patterns and no cycles. Definitions were validated when saved;
// this guards runs against versions saved before a rule existed.
func NewGraph(def *Definition) (*Graph, error) {
	n := len(def.Tasks)
	g := &Graph{Tasks: def.Tasks, Index: make(map[string]int, n), In: make([][]Edge, n), Out: make([][]Edge, n),
		Start: -1, End: -1, Any: make([]bool, n)}
	for i, t := range def.Tasks {
		if _, dup := g.Index[t.Name]; dup {
			return nil, fmt.Errorf("task name '%s' is used twice", t.Name)
		}
		g.Index[t.Name] = i
		switch t.Type {
		case tasktype.Start:
			if g.Start >= 0 {
				return nil, fmt.Errorf("the workflow has more than one start task")
			}
			g.Start = i
		case tasktype.End:
			if g.End >= 0 {
				return nil, fmt.Errorf("the workflow has more than one end task")
			}
			g.End = i
		}
	}
	if g.Start < 0 || g.End < 0 {
		return nil, fmt.Errorf("the workflow needs one start task and one end task")
	}
	for i, t := range def.Tasks {
		switch t.Join {
		case JoinAny:
			g.Any[i] = true
		case "":
			g.Any[i] = t.Type == tasktype.End
		}
		for _, d := range t.Dependencies {
			from, ok := g.Index[d.TaskRef]
			if !ok {
				return nil, fmt.Errorf("task '%s' depends on unknown task '%s'", t.Name, d.TaskRef)
			}
			e := Edge{From: from, To: i, Exec: d.ExecutionCondition}
			if e.Exec == "" {
				e.Exec = Always
			}
			for _, line := range strings.Split(d.DecisionCondition, "\n") {
				if line = strings.TrimSpace(line); line == "" {
					continue
				}
				re, err := regexp.Compile("^(?:" + line + ")$")
				if err != nil {
					return nil, fmt.Errorf("task '%s': decision condition %q: %v", t.Name, line, err)
				}
				e.Decision = append(e.Decision, re)
			}
			g.In[i] = append(g.In[i], e)
			g.Out[from] = append(g.Out[from], e)
		}
		if len(t.Dependencies) == 0 && i != g.Start {
			// A task with no dependency hangs off the start task.
			e := Edge{From: g.Start, To: i, Exec: Always}
			g.In[i] = append(g.In[i], e)
			g.Out[g.Start] = append(g.Out[g.Start], e)
		}
	}
	if err := g.checkAcyclic(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Graph) checkAcyclic() error {
	indeg := make([]int, len(g.Tasks))
	for i := range g.Tasks {
		indeg[i] = len(g.In[i])
	}
	queue := []int{}
	for i, d := range indeg {
		if d == 0 {
			queue = append(queue, i)
		}
	}
	seen := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		seen++
		for _, e := range g.Out[u] {
			if indeg[e.To]--; indeg[e.To] == 0 {
				queue = append(queue, e.To)
			}
		}
	}
	if seen != len(g.Tasks) {
		return fmt.Errorf("the workflow's tasks form a cycle")
	}
	return nil
}

// ResultNames lists the results a task may write: those it declares and its spec's.
func (t TaskDef) ResultNames() []string {
	var out []string
	if len(t.Results) > 0 {
		var items []json.RawMessage
		if json.Unmarshal(t.Results, &items) == nil {
			for _, item := range items {
				var name string
				if json.Unmarshal(item, &name) != nil {
					var obj NamedRef
					if json.Unmarshal(item, &obj) != nil {
						continue
					}
					name = obj.Name
				}
				if name != "" {
					out = append(out, name)
				}
			}
		}
	}
	if t.Spec != nil {
		for _, r := range t.Spec.Results {
			out = append(out, r.Name)
		}
	}
	return out
}
