package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/gateway/internal/cli/config"
	"github.com/baton-flow/baton/gateway/internal/cli/watch"
	"github.com/baton-flow/baton/libs/client"
)

// Version is the command's version, sent in its User-Agent.
const Version = "2.0.0"

// Connect returns the SDK's client of the context's server with its token.
func Connect(c config.Context) (*client.Client, error) {
	return client.New(c.Server, client.WithToken(c.Token), client.WithUserAgent("baton-cli/"+Version+" baton-go/"+client.Version))
}

// whoAmI says who the client's token acts as: a user's email (or name), else what
// principal the token is.
func whoAmI(ctx context.Context, c *client.Client) (string, error) {
	p, err := c.GetProfile(ctx)
	if err != nil {
		return "", err
	}
	for _, s := range []string{p.Email, p.Name, p.DisplayName, p.ID} {
		if s != "" {
			if p.PrincipalType != "" && p.PrincipalType != "user" && p.PrincipalType != "session" {
				return fmt.Sprintf("%s (a %s token)", s, p.PrincipalType), nil
			}
			return s, nil
		}
	}
	if p.PrincipalType != "" {
		return "a " + p.PrincipalType + " token", nil
	}
	return "an unnamed principal", nil
}

// runSource gives the live view a run's states from the SDK's watcher, with each task's
// dependencies from the workflow version the run ran, and the approvers of its open
// approvals and manual forms from its team.
type runSource struct {
	c *client.Client
	// deps are each task's dependencies, read once a run.
	deps map[string][]string
	// approvers are the members of each approver group of the run's team, read once.
	approvers map[string][]string
	members   []string
}

func (s *runSource) Watch(ctx context.Context, team, runID string, each func(watch.Run) error) error {
	for run, err := range s.c.Watch(ctx, team, runID) {
		if err != nil {
			return err
		}
		if s.deps == nil {
			s.deps = map[string][]string{}
			// Without the workflow (deleted since, or not readable) the tasks are drawn
			// without their edges, in the run's order.
			if w, err := s.c.GetWorkflow(ctx, team, run.WorkflowRef, client.AtVersion(int(run.WorkflowVersion))); err == nil {
				for _, t := range w.Tasks {
					for _, d := range t.Dependencies {
						s.deps[t.Name] = append(s.deps[t.Name], d.TaskRef)
					}
				}
			}
		}
		if s.approvers == nil && waitsForPeople(run) {
			s.readTeam(ctx, team)
		}
		if err := each(s.convert(run)); err != nil {
			return err
		}
	}
	return nil
}

// readTeam learns who may answer the team's actions; what cannot be read is not shown.
func (s *runSource) readTeam(ctx context.Context, team string) {
	s.approvers = map[string][]string{}
	t, err := s.c.GetTeam(ctx, team)
	if err != nil {
		return
	}
	for _, g := range t.ApproverGroups {
		var who []string
		for _, m := range g.Approvers {
			who = append(who, person(m.Email, m.Name, m.ID))
		}
		s.approvers[g.ID], s.approvers[g.Name] = who, who
	}
	for _, m := range t.Members {
		if m.Role != "reader" {
			s.members = append(s.members, person(m.Email, m.Name, m.ID))
		}
	}
}

func person(candidates ...string) string {
	for _, c := range candidates {
		if c != "" {
			return c
		}
	}
	return "?"
}

func waitsForPeople(r *client.WorkflowRun) bool {
	for _, t := range r.Tasks {
		if t.Status == client.StatusWaiting && (t.Type == "approval" || t.Type == "manual") {
			return true
		}
	}
	return false
}

// convert is the view's run of the SDK's.
func (s *runSource) convert(r *client.WorkflowRun) watch.Run {
	out := watch.Run{
		ID: r.ID, Workflow: r.WorkflowRef, Version: int(r.WorkflowVersion), Status: r.Status, Phase: r.Phase,
		StatusMessage: r.StatusMessage, Start: r.StartTime, Duration: time.Duration(r.Duration) * time.Millisecond,
	}
	if out.Workflow == "" {
		out.Workflow = r.WorkflowName
	}
	for _, t := range r.Tasks {
		params := make(map[string]string, len(t.Params))
		for _, p := range t.Params {
			params[p.Name] = valueString(p.Value)
		}
		task := watch.Task{
			Name: t.Name, Type: t.Type, Status: t.Status, Dependencies: s.deps[t.Name], Start: t.StartTime,
			Duration: time.Duration(t.Duration) * time.Millisecond, Message: t.StatusMessage, Params: params,
		}
		if t.Status == client.StatusWaiting && (t.Type == "approval" || t.Type == "manual") {
			if g := params["approverGroupRef"]; g != "" {
				task.Approvers = s.approvers[g]
			} else if g := params["approverGroupId"]; g != "" {
				task.Approvers = s.approvers[g]
			} else {
				task.Approvers = s.members
			}
		}
		out.Tasks = append(out.Tasks, task)
	}
	return out
}

// valueString writes a parameter's value as a person reads it.
func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	if raw, err := json.Marshal(v); err == nil { // lists and objects as JSON
		return string(raw)
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
