package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/workflowid"
)

// ChildRequest is the child run a runworkflow task asks for.
type ChildRequest struct {
	Team, Workflow string
	// Version pins a workflow version; 0 is the latest.
	Version int
	Params  map[string]any
	// Secret names the params that came from a secret.
	Secret []string
	// Key makes the submit idempotent: one child per task run attempt.
	Key string
	// Wait is set when the task waits for the child: the child then runs in its tree's
	// concurrency slot and starts at once.
	Wait bool
	By   Initiator
	// ParentRun and ParentTask name the task run; Ancestors and Depth place the child in
	// its parent's tree.
	ParentRun, ParentTask string
	Ancestors             []string
	Depth                 int
}

// ChildRequest reads the child run that runworkflow task i asks for from its params:
// `workflowRef` (a name, team/name or a workflow's id, of the run's own team),
// `workflowVersion` (0 or none: the latest), `params` (each taken for a secret when the
// task's params came from one) and `wait` (false: the task ends once the child is made).
// A workflow of another team fails the task invalid, and ok is false.
func (m *Machine) ChildRequest(i int) (c ChildRequest, ok bool) {
	r, t := m.S.Run, m.S.Tasks[i]
	p, _ := t.Params["params"].(map[string]any)
	version := 0
	if v, ok := t.Params["workflowVersion"].(float64); ok {
		version = int(v)
	}
	wait := true
	if w, ok := t.Params["wait"]; ok && (w == false || w == "false") {
		wait = false
	}
	ref := Text(t.Params["workflowRef"])
	if team, name, ok := workflowid.Parse(ref); ok {
		ref = team + "/" + name // a workflow's id names its team too
	}
	if team, name, ok := strings.Cut(ref, "/"); ok {
		if team != r.Team {
			m.Fail(i, Invalid, fmt.Sprintf("runworkflow may only start workflows of team '%s', not '%s'", r.Team, team))
			return ChildRequest{}, false
		}
		ref = name
	}
	var secret []string
	if slices.Contains(t.SecretParams, "params") {
		// Which of them came from a secret is not kept: each is taken for one.
		secret = slices.Sorted(maps.Keys(p))
	}
	return ChildRequest{Team: r.Team, Workflow: ref, Version: version, Params: maps.Clone(p), Secret: secret,
		Key: fmt.Sprintf("child/%s/%d/%d", r.ID, i, t.Attempt), Wait: wait,
		By:        Initiator{Type: "workflowrun", ID: r.ID, Name: r.Workflow, Person: r.InitiatedBy.Person},
		ParentRun: r.ID, ParentTask: t.Name, Ancestors: r.Lineage(), Depth: r.Depth + 1}, true
}
