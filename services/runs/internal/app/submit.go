package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/engine"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// Submission is a request to run a workflow.
type Submission struct {
	Team, Workflow string
	// Version pins a workflow version; 0 is the latest.
	Version int
	Request domain.SubmitRequest
	// Key is the idempotency key, scoped to the team and workflow.
	Key string
	// Start asks for the run to start within the call when a slot is free.
	Start bool
	// Trigger is manual for API submits; Baton's own services set others.
	Trigger string
	By      domain.Initiator
	// ParentRun and ParentTask name the runworkflow task run submitting it; Ancestors and
	// Depth place the child in its parent's tree.
	ParentRun, ParentTask string
	Ancestors             []string
	Depth                 int
	// SharesSlot runs the child within the concurrency slot of its tree (its parent
	// waits for it), so it starts at once and takes no slot of its own.
	SharesSlot bool
}

// Submit creates a run of a workflow. created is false when the idempotency key named an
// earlier run, which is returned instead.
func (a *App) Submit(ctx context.Context, s Submission) (v RunView, created bool, err error) {
	id := newRunID()
	// reused is whether id is an earlier submit's, which may have counted it already.
	reused := false
	if s.Key != "" {
		held, err := a.keys.HoldKey(ctx, s.Team+"/"+s.Workflow+"/"+s.Key, id, a.now())
		if err != nil {
			return RunView{}, false, err
		}
		if held != id {
			r, err := a.runs.FindRun(ctx, held)
			if err == nil {
				tasks, err := a.runs.FindTaskRuns(ctx, r)
				if err != nil {
					return RunView{}, false, err
				}
				return view.OfRun(r, tasks, a.now()), false, nil
			}
			if !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
				return RunView{}, false, err
			}
			// The first submit stopped before creating its run: create it under that id.
			id, reused = held, true
		}
	}
	def, err := a.defs.Snapshot(ctx, s.Team, s.Workflow, s.Version)
	if err != nil {
		return RunView{}, false, err
	}
	def.Team = s.Team
	if err := checkSubmit(def, s.Trigger); err != nil {
		return RunView{}, false, err
	}
	tc, err := a.ctxs.get(ctx, s.Team)
	if err != nil {
		return RunView{}, false, err
	}
	if err := a.resolveSpecs(ctx, def); err != nil {
		return RunView{}, false, err
	}
	now := a.now()
	build := func() (*domain.Run, []*domain.TaskRun, error) {
		r, tasks, err := domain.NewRun(id, def, s.Request, s.Trigger, s.By, now,
			domain.Limits{MaxDuration: tc.MaxDuration, TaskDefaultTimeout: tc.TaskDefaultTimeout})
		if err != nil {
			return nil, nil, engine.RequestError(err)
		}
		r.ParentRun, r.ParentTask, r.Ancestors, r.Depth, r.SharesSlot = s.ParentRun, s.ParentTask, s.Ancestors, s.Depth, s.SharesSlot
		r.Context = a.runContext(r, tc)
		return r, tasks, nil
	}
	v, err = a.create(ctx, tc, s.Start, reused, build)
	if errors.Is(err, domain.ErrConflict) && s.Key != "" {
		// A concurrent submit with the same key created it first.
		return a.Submit(ctx, s)
	}
	return v, err == nil, err
}

// create counts and stores a new run made by build, then starts it now (start) or soon.
// It answers the run as stored. build may be called twice: a run started in memory that
// finds no free slot is stored queued as built anew. reused says the run's id is an earlier
// submit's (the same idempotency key), which may hold a count for it already.
func (a *App) create(ctx context.Context, tc TeamContext, start, reused bool, build func() (*domain.Run, []*domain.TaskRun, error)) (RunView, error) {
	r, tasks, err := build()
	if err != nil {
		return RunView{}, err
	}
	m := month(r.CreationDate)
	ok, added := false, true
	if reused {
		ok, added, err = a.quotas.CountMonthlyOnce(ctx, r.Team, m, r.ID, tc.MaxMonthly)
	} else {
		ok, err = a.quotas.CountMonthly(ctx, r.Team, m, r.ID, tc.MaxMonthly)
	}
	if err != nil {
		return RunView{}, err
	}
	if !ok {
		return RunView{}, apperr.New(apperr.QuotaExceeded, "Team '%s' has used its %d runs for this month.", r.Team, tc.MaxMonthly)
	}
	var v RunView
	err = a.engine.Create(ctx, engine.Creation{Run: r, Tasks: tasks, Rebuild: build, Start: start, MaxConcurrent: tc.MaxConcurrent},
		func(r *domain.Run, tasks []*domain.TaskRun) { v = view.OfRun(r, tasks, a.now()) })
	a.settleCount(ctx, r, m, reused, added, err)
	return v, err
}

// settleCount says what became of the run counted for r by create, whose creation ended
// with err: a stored run keeps its count; one not stored gives it back. What cannot be told
// now (the call's context ended, the store did not answer) is left held for the reconciler
// (ReconcileMonthly).
func (a *App) settleCount(ctx context.Context, r *domain.Run, m string, reused, added bool, err error) {
	if err == nil {
		if err := a.quotas.RunStored(ctx, r.Team, m, r.ID); err != nil {
			a.log.Warn("cannot note a counted run stored", "run", r.ID, "error", err)
		}
		return
	}
	if !added || ctx.Err() != nil {
		// The count held is another submit's of the same run, or what was stored cannot be
		// read now.
		return
	}
	if !reused {
		// A write that failed may still have been applied: a run stored keeps its count.
		if _, ferr := a.runs.FindRun(ctx, r.ID); ferr == nil {
			_ = a.quotas.RunStored(ctx, r.Team, m, r.ID)
			return
		} else if !apperr.HasReason(ferr, apperr.WorkflowRunNotFound) {
			return
		}
	}
	// Not stored, or stored by the submit whose count this one's repeats.
	if _, gerr := a.quotas.GiveBackMonthly(ctx, r.Team, m, r.ID); gerr != nil {
		a.log.Warn("cannot give back the count of a run not created", "run", r.ID, "error", gerr)
	}
}

// DecodeParams reads a request's params, sent as the contract's list of {name, value} or
// as an object of name to value; what cannot be read is the contract's 400.
func DecodeParams(raw json.RawMessage) (map[string]any, error) {
	params, err := domain.DecodeParams(raw)
	return params, engine.RequestError(err)
}

func checkSubmit(def *domain.Definition, trigger string) error {
	if def.Status == "inactive" {
		return apperr.New(apperr.WorkflowNotActive, "Workflow '%s' is inactive: activate it to run it.", def.Name)
	}
	name := trigger
	switch trigger {
	case "task", "retry", "":
		return nil
	case "chat":
		// A chat command is a person starting the run by hand.
		name = "manual"
	}
	t, ok := def.Triggers[name]
	if !ok && name == "codehost" {
		t, ok = def.Triggers["github"]
	}
	// The manual trigger is enabled unless a workflow turns it off; the others must be on.
	if (ok && !t.Enabled) || (!ok && name != "manual") {
		return apperr.New(apperr.WorkflowRunTriggerDisabled, "The %s trigger of workflow '%s' is disabled.", name, def.Name)
	}
	return nil
}

func month(t time.Time) string { return t.UTC().Format("2006-01") }

func newRunID() string { return uuid.Must(uuid.NewV7()).String() }

// runContext captures what the run's references resolve against beyond its params.
func (a *App) runContext(r *domain.Run, tc TeamContext) domain.RunContext {
	rc := domain.RunContext{Global: tc.Global, Team: tc.Team, SecretNames: tc.Secrets}
	for _, name := range tc.Secrets {
		layer, n, _ := strings.Cut(name, ".")
		var v any
		if layer == "global" {
			v = tc.Global[n]
		} else {
			v = tc.Team[n]
		}
		rc.Secrets = append(rc.Secrets, domain.SecretTexts(v)...)
	}
	for _, name := range r.SecretParams {
		rc.Secrets = append(rc.Secrets, domain.SecretTexts(r.Params[name])...)
	}
	if a.tokens != nil {
		rc.CallbackToken = a.tokens.RunToken(r.ID)
		rc.Secrets = append(rc.Secrets, rc.CallbackToken)
	}
	if base := strings.TrimRight(a.cfg.PublicURL, "/"); base != "" {
		cb := base + "/api/v2/callback?ref=" + r.ID
		rc.Links = map[string]string{
			"callback-url": cb, "wfe-url": cb,
			"webhook-url": base + "/api/v2/webhook?ref=" + r.Team + "/" + r.Workflow,
			"event-url":   base + "/api/v2/event?ref=" + r.Team + "/" + r.Workflow,
		}
	}
	return rc
}

// resolveSpecs fills the catalogue specs of def's template tasks.
func (a *App) resolveSpecs(ctx context.Context, def *domain.Definition) error {
	for i := range def.Tasks {
		t := &def.Tasks[i]
		if t.Type != tasktype.Template || t.Spec != nil {
			continue
		}
		version := 0
		if t.TaskVersion != nil {
			version = *t.TaskVersion
		}
		spec, v, err := a.cat.TaskSpec(ctx, t.TaskRef, version)
		if err != nil {
			return err
		}
		t.Spec = spec
		t.TaskVersion = &v
	}
	return nil
}

// StartChild implements engine.RunStarter: it submits the child run a runworkflow task
// asks for, unless it would nest deeper than the team's limit or grow its tree past it.
func (a *App) StartChild(ctx context.Context, c engine.ChildRequest) (string, error) {
	tc, err := a.ctxs.get(ctx, c.Team)
	if err != nil {
		return "", err
	}
	if c.Depth > tc.maxDepth() {
		return "", &engine.ChildRefused{Reason: fmt.Sprintf(
			"the child run would be nested %d deep, deeper than the limit of %d (setting runs.maxDepth)", c.Depth, tc.maxDepth())}
	}
	below, err := a.runs.CountDescendants(ctx, c.Ancestors[0])
	if err != nil {
		return "", err
	}
	if below >= int64(tc.maxTreeRuns()) {
		return "", &engine.ChildRefused{Reason: fmt.Sprintf(
			"run %s already has %d runs below it, the limit (setting runs.maxTreeRuns)", c.Ancestors[0], below)}
	}
	v, _, err := a.Submit(ctx, Submission{Team: c.Team, Workflow: c.Workflow, Version: c.Version,
		Request: domain.SubmitRequest{Params: c.Params, Secret: c.Secret}, Key: c.Key, Trigger: "task", Start: c.Wait,
		By: c.By, ParentRun: c.ParentRun, ParentTask: c.ParentTask, Ancestors: c.Ancestors, Depth: c.Depth, SharesSlot: c.Wait})
	return v.ID, err
}

// RetryRun implements engine.RunStarter: it submits a failed run's automatic retry, once,
// the new run's id held under the failed run's.
func (a *App) RetryRun(ctx context.Context, id string) error {
	newID := newRunID()
	held, err := a.keys.HoldKey(ctx, "retry/"+id, newID, a.now())
	if err != nil {
		return err
	}
	if held != newID {
		if _, err := a.runs.FindRun(ctx, held); err == nil {
			return nil
		}
	}
	// An automatic retry counts down the retries the failed run had left.
	r, tasks, tc, err := a.buildRetry(ctx, id, held, domain.SubmitRequest{}, true, domain.Initiator{Type: "service", ID: "runs", Name: "automatic retry"})
	if err == nil {
		_, err = a.createRetry(ctx, tc, r, tasks)
	}
	if errors.Is(err, domain.ErrConflict) {
		return nil
	}
	return err
}
