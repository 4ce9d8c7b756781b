package domain

import (
	"encoding/json"
	"fmt"
	"maps"

	"github.com/baton-flow/baton/libs/tasktype"
)

// Canvas annotations and dependency members that carry what only the designer needs, so
// workflow → canvas → workflow and canvas → workflow → canvas both lose nothing. They are
// written only when they differ from what the conversion would derive anyway.
const (
	// AnnotationPosition is a task's canvas position {x, y}.
	AnnotationPosition = "baton.io/position"
	// AnnotationNodeID is a node id other than the task's name.
	AnnotationNodeID = "baton.io/node-id"
	// EdgeID and EdgeType are an edge's id and type other than the derived ones.
	EdgeID   = "baton.io/edge-id"
	EdgeType = "baton.io/edge-type"
)

// Canvas is the designer's model of a workflow (WorkflowCanvas): the workflow's fields with
// `params` called `config`, and its tasks as nodes and edges.
type Canvas struct {
	// Workflow holds everything but the tasks.
	Workflow Workflow
	Nodes    []Node
	Edges    []Edge
}

// Node is a task on the canvas. Data holds the task's fields other than its type and
// dependencies, unknown ones included.
type Node struct {
	ID       string                     `json:"id"`
	Type     string                     `json:"type"`
	Position json.RawMessage            `json:"position,omitempty"`
	Data     map[string]json.RawMessage `json:"data"`
}

// Edge is a dependency on the canvas, from the upstream node (Source) to the dependent one
// (Target). Data holds the dependency's conditions and unknown members.
type Edge struct {
	ID     string                     `json:"id"`
	Source string                     `json:"source"`
	Target string                     `json:"target"`
	Type   string                     `json:"type,omitempty"`
	Data   map[string]json.RawMessage `json:"data"`
}

// Edge types derived when none was stored.
const (
	EdgeTypeDefault  = "default"
	EdgeTypeDecision = "decision"
)

func defaultEdgeID(source, target string) string { return source + "-" + target }

// MarshalJSON writes the workflow's fields, `config`, `nodes` and `edges`.
func (c Canvas) MarshalJSON() ([]byte, error) {
	w := c.Workflow
	w.Tasks = nil
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if params, ok := m["params"]; ok {
		m["config"] = params
		delete(m, "params")
	}
	nodes, edges := c.Nodes, c.Edges
	if nodes == nil {
		nodes = []Node{}
	}
	if edges == nil {
		edges = []Edge{}
	}
	if m["nodes"], err = json.Marshal(nodes); err != nil {
		return nil, err
	}
	if m["edges"], err = json.Marshal(edges); err != nil {
		return nil, err
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads a canvas; `config` is the workflow's `params`.
func (c *Canvas) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	var out Canvas
	if raw, ok := m["nodes"]; ok && present(raw) {
		if err := json.Unmarshal(raw, &out.Nodes); err != nil {
			return fmt.Errorf("nodes: %w", err)
		}
	}
	if raw, ok := m["edges"]; ok && present(raw) {
		if err := json.Unmarshal(raw, &out.Edges); err != nil {
			return fmt.Errorf("edges: %w", err)
		}
	}
	if config, ok := m["config"]; ok {
		m["params"] = config
	}
	for _, k := range []string{"config", "nodes", "edges", "tasks"} {
		delete(m, k)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, &out.Workflow); err != nil {
		return err
	}
	*c = out
	return nil
}

// ToCanvas converts w into its canvas. Nothing is lost: FromCanvas gives w back.
func ToCanvas(w Workflow) (Canvas, error) {
	c := Canvas{Workflow: w}
	c.Workflow.Tasks = nil
	nodeIDs := make(map[string]string, len(w.Tasks))
	types := make(map[string]string, len(w.Tasks))
	for _, t := range w.Tasks {
		nodeIDs[t.Name] = nodeID(t)
		types[t.Name] = t.Type
	}
	c.Nodes = make([]Node, 0, len(w.Tasks))
	for _, t := range w.Tasks {
		n, err := taskNode(t)
		if err != nil {
			return Canvas{}, err
		}
		c.Nodes = append(c.Nodes, n)
		for _, d := range t.Dependencies {
			source, ok := nodeIDs[d.TaskRef]
			if !ok {
				source = d.TaskRef
			}
			c.Edges = append(c.Edges, dependencyEdge(d, source, n.ID, types[d.TaskRef]))
		}
	}
	return c, nil
}

func nodeID(t Task) string {
	var id string
	if raw, ok := t.Annotations[AnnotationNodeID]; ok && json.Unmarshal(raw, &id) == nil && id != "" {
		return id
	}
	return t.Name
}

func taskNode(t Task) (Node, error) {
	n := Node{ID: nodeID(t), Type: t.Type, Position: t.Annotations[AnnotationPosition]}
	t.Type, t.Dependencies = "", nil
	t.Annotations = maps.Clone(t.Annotations)
	delete(t.Annotations, AnnotationPosition)
	delete(t.Annotations, AnnotationNodeID)
	raw, err := json.Marshal(t)
	if err != nil {
		return Node{}, err
	}
	if err := json.Unmarshal(raw, &n.Data); err != nil {
		return Node{}, err
	}
	delete(n.Data, "type")
	return n, nil
}

func dependencyEdge(d Dependency, source, target, sourceType string) Edge {
	e := Edge{ID: defaultEdgeID(source, target), Source: source, Target: target, Type: EdgeTypeDefault, Data: map[string]json.RawMessage{}}
	if sourceType == tasktype.Decision {
		e.Type = EdgeTypeDecision
	}
	for k, v := range d.Extra {
		var s string
		switch k {
		case EdgeID:
			if json.Unmarshal(v, &s) == nil {
				e.ID = s
			}
		case EdgeType:
			if json.Unmarshal(v, &s) == nil {
				e.Type = s
			}
		default:
			e.Data[k] = v
		}
	}
	if d.ExecutionCondition != "" {
		e.Data["executionCondition"], _ = json.Marshal(d.ExecutionCondition)
	}
	if d.DecisionCondition != "" {
		e.Data["decisionCondition"], _ = json.Marshal(d.DecisionCondition)
	}
	return e
}

// FromCanvas converts a canvas back into its workflow. Nodes become tasks in their order;
// each edge becomes a dependency of its target. Problems name nodes and edges that cannot
// be converted; everything else is left to Validate.
func FromCanvas(c Canvas) (Workflow, []Problem) {
	w := c.Workflow
	w.Tasks = make([]Task, 0, len(c.Nodes))
	var problems []Problem
	byNode := make(map[string]int, len(c.Nodes))
	for i, n := range c.Nodes {
		field := fmt.Sprintf("nodes[%d]", i)
		t, err := nodeTask(n)
		if err != nil {
			problems = append(problems, Problem{Field: field + ".data", Message: err.Error()})
			continue
		}
		id := n.ID
		if id == "" {
			id = t.Name
		}
		if id == "" {
			problems = append(problems, Problem{Field: field + ".id", Message: "a node needs an id or a name"})
			continue
		}
		if _, dup := byNode[id]; dup {
			problems = append(problems, Problem{Field: field + ".id", Message: fmt.Sprintf("another node has the id '%s'", id)})
			continue
		}
		byNode[id] = len(w.Tasks)
		w.Tasks = append(w.Tasks, t)
	}
	for i, e := range c.Edges {
		field := fmt.Sprintf("edges[%d]", i)
		target, ok := byNode[e.Target]
		if !ok {
			problems = append(problems, Problem{Field: field + ".target", Message: fmt.Sprintf("no node '%s'", e.Target)})
			continue
		}
		source, ok := byNode[e.Source]
		if !ok {
			problems = append(problems, Problem{Field: field + ".source", Message: fmt.Sprintf("no node '%s'", e.Source)})
			continue
		}
		d, err := edgeDependency(e, w.Tasks[source])
		if err != nil {
			problems = append(problems, Problem{Field: field + ".data", Message: err.Error()})
			continue
		}
		w.Tasks[target].Dependencies = append(w.Tasks[target].Dependencies, d)
	}
	return w, problems
}

func nodeTask(n Node) (Task, error) {
	data := maps.Clone(n.Data)
	if data == nil {
		data = map[string]json.RawMessage{}
	}
	// The node's own type and the edges win over stale copies in its data.
	if n.Type != "" {
		data["type"], _ = json.Marshal(n.Type)
	}
	delete(data, "dependencies")
	raw, err := json.Marshal(data)
	if err != nil {
		return Task{}, err
	}
	var t Task
	if err := json.Unmarshal(raw, &t); err != nil {
		return Task{}, err
	}
	if t.Name == "" {
		t.Name = n.ID
	}
	if n.ID != "" && n.ID != t.Name {
		t = t.withAnnotation(AnnotationNodeID, n.ID)
	}
	if present(n.Position) {
		t.Annotations = maps.Clone(t.Annotations)
		if t.Annotations == nil {
			t.Annotations = map[string]json.RawMessage{}
		}
		t.Annotations[AnnotationPosition] = n.Position
	}
	return t, nil
}

func (t Task) withAnnotation(key string, v any) Task {
	raw, _ := json.Marshal(v)
	t.Annotations = maps.Clone(t.Annotations)
	if t.Annotations == nil {
		t.Annotations = map[string]json.RawMessage{}
	}
	t.Annotations[key] = raw
	return t
}

func edgeDependency(e Edge, source Task) (Dependency, error) {
	raw, err := json.Marshal(e.Data)
	if err != nil {
		return Dependency{}, err
	}
	var d Dependency
	if len(e.Data) > 0 {
		if err := json.Unmarshal(raw, &d); err != nil {
			return Dependency{}, err
		}
	}
	d.TaskRef = source.Name
	put := func(k, v string) {
		if d.Extra == nil {
			d.Extra = Extra{}
		}
		d.Extra[k], _ = json.Marshal(v)
	}
	sourceID := nodeID(source)
	if e.ID != "" && e.ID != defaultEdgeID(sourceID, e.Target) {
		put(EdgeID, e.ID)
	}
	wantType := EdgeTypeDefault
	if source.Type == tasktype.Decision {
		wantType = EdgeTypeDecision
	}
	if e.Type != "" && e.Type != wantType {
		put(EdgeType, e.Type)
	}
	return d, nil
}
