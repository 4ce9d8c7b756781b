package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
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
func (e *Engine) Submit(ctx context.Context, s Submission) (view RunView, created bool, err error) {
	id := newRunID()
	if s.Key != "" {
		held, err := e.store.Claim(ctx, s.Team+"/"+s.Workflow+"/"+s.Key, id, e.now())
		if err != nil {
			return RunView{}, false, err
		}
		if held != id {
			r, err := e.store.FindRun(ctx, held, false)
			if err == nil {
				tasks, err := e.store.FindTasks(ctx, r)
				if err != nil {
					return RunView{}, false, err
				}
				return ViewRun(r, tasks, e.now()), false, nil
			}
			if !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
				return RunView{}, false, err
			}
			// The first submit stopped before creating its run: create it under that id.
			id = held
		}
	}
	def, err := e.defs.Snapshot(ctx, s.Team, s.Workflow, s.Version)
	if err != nil {
		return RunView{}, false, err
	}
	def.Team = s.Team
	if err := checkSubmit(def, s.Trigger); err != nil {
		return RunView{}, false, err
	}
	tc, err := e.ctxs.get(ctx, s.Team)
	if err != nil {
		return RunView{}, false, err
	}
	if err := e.resolveSpecs(ctx, def); err != nil {
		return RunView{}, false, err
	}
	now := e.now()
	build := func() (*domain.Run, []*domain.TaskRun, error) {
		r, tasks, err := domain.NewRun(id, def, s.Request, s.Trigger, s.By, now,
			domain.Limits{MaxDuration: tc.MaxDuration, TaskDefaultTimeout: tc.TaskDefaultTimeout})
		if err != nil {
			return nil, nil, requestError(err)
		}
		r.ParentRun, r.ParentTask, r.Ancestors, r.Depth, r.SharesSlot = s.ParentRun, s.ParentTask, s.Ancestors, s.Depth, s.SharesSlot
		r.Context = e.runContext(r, tc)
		return r, tasks, nil
	}
	v, err := e.create(ctx, tc, s.Start, build)
	if errors.Is(err, mongostore.ErrConflict) && s.Key != "" {
		// A concurrent submit with the same key created it first.
		return e.Submit(ctx, s)
	}
	return v, err == nil, err
}

// create counts and stores a new run made by build, then starts it now (start) or soon.
// It answers the run as stored, rendered from memory. build may be called twice: a run
// started in memory that finds no free slot is stored queued as built anew.
func (e *Engine) create(ctx context.Context, tc TeamContext, start bool, build func() (*domain.Run, []*domain.TaskRun, error)) (RunView, error) {
	r, tasks, err := build()
	if err != nil {
		return RunView{}, err
	}
	ok, err := e.store.CountMonthly(ctx, r.Team, month(r.CreationDate), tc.MaxMonthly)
	if err != nil {
		return RunView{}, err
	}
	if !ok {
		return RunView{}, apperr.New(apperr.QuotaExceeded, "Team '%s' has used its %d runs for this month.", r.Team, tc.MaxMonthly)
	}
	if start {
		taken := 0
		if !r.SharesSlot {
			if taken, err = e.store.SlotsTaken(ctx, r.Team); err != nil {
				return RunView{}, err
			}
		}
		if r.SharesSlot || taken < tc.MaxConcurrent {
			v, started, err := e.startNew(ctx, r, tasks, tc)
			if err != nil || started {
				return v, err
			}
			if r, tasks, err = build(); err != nil {
				return RunView{}, err
			}
		}
	}
	r.Owner, r.Queued = e.cfg.Replica, true
	if err := e.store.CreateRun(ctx, r, tasks); err != nil {
		return RunView{}, err
	}
	// Rendered before anything may start it: r and tasks stay this call's, the engine
	// loads its own copy.
	v := ViewRun(r, tasks, e.now())
	if !start {
		e.kickQueued(r.Team)
	}
	return v, nil
}

// startNew takes a new run's first step in memory, before the run is stored. A run that
// ends within it (inline tasks only) is written once, to the archive, and never holds a
// concurrency slot; one that goes on takes a slot first, unless it shares its tree's, and
// started is false when none is free (nothing is stored then).
func (e *Engine) startNew(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, tc TeamContext) (v RunView, started bool, err error) {
	r.Owner, r.Queued = e.cfg.Replica, false
	st, err := domain.NewState(r, tasks)
	if err != nil {
		return RunView{}, false, err
	}
	a := e.actor(r.ID)
	a.mu.Lock()
	defer a.mu.Unlock()
	m := domain.NewMachine(st, e.now())
	if err := m.Start(); err != nil {
		e.forget(r.ID)
		return RunView{}, false, phaseError(err)
	}
	ended := r.Phase.Ended()
	slotted := !ended && !r.SharesSlot
	if slotted {
		slot, err := e.store.AcquireSlot(ctx, r.Team, r.ID, tc.MaxConcurrent)
		if err != nil || !slot {
			e.forget(r.ID)
			return RunView{}, false, err
		}
	}
	if err := e.store.CreateRun(ctx, r, tasks); err != nil {
		if slotted {
			_ = e.store.ReleaseSlot(ctx, r.Team, r.ID)
		}
		e.forget(r.ID)
		return RunView{}, false, err
	}
	a.st = st
	e.effects(r.ID, st, m)
	// Rendered under the run's lock, before its next step can move it.
	v = ViewRun(r, tasks, e.now())
	if ended {
		// Stored in the archive at once (CreateRun let go of its owner): nothing to put
		// away later.
		e.forget(r.ID)
	}
	return v, true, nil
}

func checkSubmit(def *domain.Definition, trigger string) error {
	if def.Status == "inactive" {
		return apperr.New(apperr.WorkflowNotActive, "Workflow '%s' is inactive: activate it to run it.", def.Name)
	}
	name := trigger
	switch trigger {
	case "task", "retry", "":
		return nil
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

func requestError(err error) error {
	var re *domain.ErrRequest
	if errors.As(err, &re) {
		e := apperr.New(apperr.WorkflowRunInvalidReq, "%s", re.Message)
		for field, msg := range re.Fields {
			e.Fields = append(e.Fields, apperr.FieldError{Field: field, Message: msg})
		}
		return e
	}
	return err
}

func month(t time.Time) string { return t.UTC().Format("2006-01") }

func newRunID() string { return uuid.Must(uuid.NewV7()).String() }

// runContext captures what the run's references resolve against beyond its params.
func (e *Engine) runContext(r *domain.Run, tc TeamContext) domain.RunContext {
	rc := domain.RunContext{Global: tc.Global, Team: tc.Team, SecretNames: tc.Secrets}
	for _, name := range tc.Secrets {
		layer, n, _ := strings.Cut(name, ".")
		var v any
		if layer == "global" {
			v = tc.Global[n]
		} else {
			v = tc.Team[n]
		}
		if s := domain.Text(v); s != "" {
			rc.Secrets = append(rc.Secrets, s)
		}
	}
	for _, name := range r.SecretParams {
		if s := domain.Text(r.Params[name]); s != "" {
			rc.Secrets = append(rc.Secrets, s)
		}
	}
	if base := strings.TrimRight(e.cfg.PublicURL, "/"); base != "" {
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
func (e *Engine) resolveSpecs(ctx context.Context, def *domain.Definition) error {
	for i := range def.Tasks {
		t := &def.Tasks[i]
		if t.Type != tasktype.Template || t.Spec != nil {
			continue
		}
		version := 0
		if t.TaskVersion != nil {
			version = *t.TaskVersion
		}
		spec, v, err := e.cat.TaskSpec(ctx, t.TaskRef, version)
		if err != nil {
			return err
		}
		t.Spec = spec
		t.TaskVersion = &v
	}
	return nil
}

// tryStart starts a queued run when its team has a free slot. explicit (PUT start)
// answers 429 when none is free; otherwise the run stays queued.
func (e *Engine) tryStart(ctx context.Context, id, team string, req *domain.SubmitRequest, explicit bool) (bool, error) {
	tc, err := e.ctxs.get(ctx, team)
	if err != nil {
		return false, err
	}
	ok, err := e.store.AcquireSlot(ctx, team, id, tc.MaxConcurrent)
	if err != nil {
		return false, err
	}
	if !ok {
		if req != nil {
			if err := e.with(ctx, id, func(m *domain.Machine) error {
				if m.S.Run.Phase != domain.Queued {
					return phaseError(&domain.ErrInvalidPhase{Run: id, Phase: m.S.Run.Phase, Status: m.S.Run.Status})
				}
				return e.merge(m, *req)
			}); err != nil {
				return false, err
			}
		}
		if explicit {
			return false, apperr.New(apperr.QuotaExceeded, "Team '%s' runs %d runs at once already; the run stays queued.",
				team, tc.MaxConcurrent).WithRetryAfter(5 * time.Second)
		}
		return false, nil
	}
	err = e.with(ctx, id, func(m *domain.Machine) error {
		if req != nil {
			if err := e.merge(m, *req); err != nil {
				return err
			}
		}
		return phaseError(m.Start())
	})
	if err != nil {
		if isPhase(err) {
			// Started or ended meanwhile: whichever holds the slot keeps it.
			if r, ferr := e.store.FindRun(ctx, id, false); ferr == nil && r.Phase.Ended() {
				_ = e.store.ReleaseSlot(ctx, team, id)
			}
		}
		return false, err
	}
	return true, nil
}

func (e *Engine) merge(m *domain.Machine, req domain.SubmitRequest) error {
	if err := m.S.Run.Merge(req); err != nil {
		return requestError(err)
	}
	m.MarkRunChanged()
	return nil
}

// kickQueued has a team's queued runs looked at soon, in the background. Kicks that come
// while a look is under way make one more look after it, not one each: a burst of
// submits or ends lists the runs in flight a few times, not once per run.
func (e *Engine) kickQueued(team string) {
	e.queueMu.Lock()
	if e.queueLooks[team] != nil {
		*e.queueLooks[team] = true
		e.queueMu.Unlock()
		return
	}
	again := new(bool)
	e.queueLooks[team] = again
	e.queueMu.Unlock()
	e.spawn(func(ctx context.Context) {
		for {
			e.startQueued(ctx, team)
			e.queueMu.Lock()
			if !*again || ctx.Err() != nil {
				delete(e.queueLooks, team)
				e.queueMu.Unlock()
				return
			}
			*again = false
			e.queueMu.Unlock()
		}
	})
}

// startQueued starts a team's queued runs held by this replica, oldest first, while slots
// are free.
func (e *Engine) startQueued(ctx context.Context, team string) {
	all, err := e.store.ListActive(ctx)
	if err != nil {
		e.log.Warn("cannot list queued runs", "error", err)
		return
	}
	queued := queuedOf(all, team, e.cfg.Replica)
	for _, a := range queued {
		started, err := e.tryStart(ctx, a.ID, a.Team, nil, false)
		if err != nil && !isPhase(err) && !apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			e.log.Warn("cannot start queued run", "run", a.ID, "error", err)
			return
		}
		if isPhase(err) || apperr.HasReason(err, apperr.WorkflowRunNotFound) {
			_ = e.store.SetQueued(ctx, a.ID, false)
			continue
		}
		if !started {
			return
		}
	}
}

func queuedOf(all []mongostore.Active, team, owner string) []mongostore.Active {
	var out []mongostore.Active
	for _, a := range all {
		if a.Queued && a.Owner == owner && (team == "" || a.Team == team) {
			out = append(out, a)
		}
	}
	sortActive(out)
	return out
}

// Start starts a queued run now (PUT start), with req merged in first.
func (e *Engine) Start(ctx context.Context, team, id string, req domain.SubmitRequest) (RunView, error) {
	r, err := e.teamRun(ctx, team, id)
	if err != nil {
		return RunView{}, err
	}
	if r.Phase != domain.Queued {
		return RunView{}, phaseError(&domain.ErrInvalidPhase{Run: id, Phase: r.Phase, Status: r.Status})
	}
	if _, err := e.tryStart(ctx, id, team, &req, true); err != nil {
		return RunView{}, err
	}
	return e.Get(ctx, id, true)
}

// Cancel cancels a run that has not completed.
func (e *Engine) Cancel(ctx context.Context, id, why string) error {
	return e.with(ctx, id, func(m *domain.Machine) error { return phaseError(m.Cancel(why)) })
}

// ActiveRuns counts team's runs that are not completed, of workflow when it is not empty:
// what deleting the workflow or the team waits for.
func (e *Engine) ActiveRuns(ctx context.Context, team, workflow string) (int, error) {
	ids, err := e.store.FindActive(ctx, team, workflow)
	return len(ids), err
}

// CancelActiveRuns cancels team's runs that are not completed, of workflow when it is not
// empty, saying why; it answers how many it cancelled. A run that completes meanwhile is
// left as it ended.
func (e *Engine) CancelActiveRuns(ctx context.Context, team, workflow, why string) (int, error) {
	ids, err := e.store.FindActive(ctx, team, workflow)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range ids {
		err := e.Cancel(ctx, id, why)
		switch {
		case err == nil:
			n++
		case isPhase(err) || apperr.HasReason(err, apperr.WorkflowRunNotFound):
		default:
			return n, err
		}
	}
	return n, nil
}

// DeleteTeam removes the runs of a team that was deleted: those not completed are
// cancelled first, and it fails, for its caller to try again, while any is still being put
// away.
func (e *Engine) DeleteTeam(ctx context.Context, team string) error {
	if _, err := e.CancelActiveRuns(ctx, team, "", "cancelled: team "+team+" was deleted"); err != nil {
		return err
	}
	busy, err := e.store.HasLiveRuns(ctx, team)
	if err != nil {
		return err
	}
	if busy {
		return fmt.Errorf("delete the runs of team %s: some are still being put away", team)
	}
	return e.store.DeleteTeam(ctx, team)
}

// CancelTeamRun cancels a run of team.
func (e *Engine) CancelTeamRun(ctx context.Context, team, id, by string) (RunView, error) {
	if _, err := e.teamRun(ctx, team, id); err != nil {
		return RunView{}, err
	}
	if err := e.Cancel(ctx, id, "cancelled by "+by); err != nil {
		return RunView{}, err
	}
	return e.Get(ctx, id, true)
}

// Finalize moves a completed run of team to finalized.
func (e *Engine) Finalize(ctx context.Context, team, id string) (RunView, error) {
	for try := 0; ; try++ {
		r, err := e.teamRun(ctx, team, id)
		if err != nil {
			return RunView{}, err
		}
		if r.Phase != domain.Completed {
			return RunView{}, phaseError(&domain.ErrInvalidPhase{Run: id, Phase: r.Phase, Status: r.Status})
		}
		if r.Owner != "" {
			// Not yet put away: the move is a step like any other.
			err = e.with(ctx, id, func(m *domain.Machine) error { return phaseError(m.Finalize()) })
		} else {
			var done bool
			if done, err = e.store.Finalize(ctx, id); err == nil && !done {
				err = phaseError(&domain.ErrInvalidPhase{Run: id, Phase: domain.Finalized, Status: r.Status})
			}
		}
		if errors.Is(err, mongostore.ErrConflict) {
			// A run that just ended is being put away in the archive while it is
			// finalized: decide again on what is stored now.
			if try < errConflictRetries {
				continue
			}
			return RunView{}, apperr.Wrap(apperr.ConcurrentModification, err, "Workflow run '%s' changed while it was finalized; try again.", id)
		}
		if err != nil {
			return RunView{}, err
		}
		return e.Get(ctx, id, true)
	}
}

// Retry makes a new run of a run of team that did not succeed.
func (e *Engine) Retry(ctx context.Context, team, id string, req domain.SubmitRequest, fromFailure bool, by domain.Initiator) (RunView, error) {
	if _, err := e.teamRun(ctx, team, id); err != nil {
		return RunView{}, err
	}
	return e.retry(ctx, id, newRunID(), req, fromFailure, by, false)
}

func (e *Engine) retry(ctx context.Context, id, newID string, req domain.SubmitRequest, fromFailure bool, by domain.Initiator, auto bool) (RunView, error) {
	old, err := e.store.FindRun(ctx, id, true)
	if err != nil {
		return RunView{}, err
	}
	oldTasks, err := e.store.FindTasks(ctx, old)
	if err != nil {
		return RunView{}, err
	}
	r, tasks, err := domain.NewRetry(newID, old, oldTasks, req, fromFailure, by, e.now())
	if err != nil {
		return RunView{}, requestError(phaseError(err))
	}
	if !auto {
		r.Retries = 0
	}
	tc, err := e.ctxs.get(ctx, r.Team)
	if err != nil {
		return RunView{}, err
	}
	// Created queued (start false), so built once.
	return e.create(ctx, tc, false, func() (*domain.Run, []*domain.TaskRun, error) { return r, tasks, nil })
}

// autoRetry submits a failed run's automatic retry, once: the new run's id is claimed
// under the failed run's id.
func (e *Engine) autoRetry(ctx context.Context, id string) {
	newID := newRunID()
	held, err := e.store.Claim(ctx, "retry/"+id, newID, e.now())
	if err != nil {
		e.log.Warn("cannot retry run", "run", id, "error", err)
		return
	}
	if held != newID {
		if _, err := e.store.FindRun(ctx, held, false); err == nil {
			return
		}
	}
	if _, err := e.retry(ctx, id, held, domain.SubmitRequest{}, true, domain.Initiator{Type: "service", ID: "runs", Name: "automatic retry"}, true); err != nil &&
		!errors.Is(err, mongostore.ErrConflict) {
		e.log.Warn("cannot retry run", "run", id, "error", err)
	}
}

// teamRun reads a run and checks it belongs to team; another team's run is not found.
func (e *Engine) teamRun(ctx context.Context, team, id string) (*domain.Run, error) {
	r, err := e.store.FindRun(ctx, id, false)
	if err != nil {
		return nil, err
	}
	if r.Team != team {
		return nil, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
	}
	return r, nil
}

// Get reads a run as stored.
func (e *Engine) Get(ctx context.Context, id string, withTasks bool) (RunView, error) {
	r, err := e.store.FindRun(ctx, id, true)
	if err != nil {
		return RunView{}, err
	}
	var tasks []*domain.TaskRun
	if withTasks {
		if tasks, err = e.store.FindTasks(ctx, r); err != nil {
			return RunView{}, err
		}
	}
	return ViewRun(r, tasks, e.now()), nil
}

// GetTeamRun reads a run of team.
func (e *Engine) GetTeamRun(ctx context.Context, team, id string, withTasks bool) (RunView, error) {
	v, err := e.Get(ctx, id, withTasks)
	if err != nil {
		return RunView{}, err
	}
	if v.Team != team {
		return RunView{}, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", id)
	}
	return v, nil
}

// startChild submits the child run of runworkflow task i of run. A child deeper than the
// team's limit is never submitted: the task ends invalid. A child that its task no longer
// wants once it exists, or whose tree was stopped above it meanwhile, is cancelled here:
// the stop's own cascade read the runs in flight before this one was stored.
func (e *Engine) startChild(ctx context.Context, run string, i int) {
	var s Submission
	var wait = true
	var attempt int
	if err := e.with(ctx, run, func(m *domain.Machine) error {
		r, t := m.S.Run, m.S.Tasks[i]
		if t.Status != domain.Running || t.Child != "" {
			return errSkip
		}
		attempt = t.Attempt
		p, _ := t.Params["params"].(map[string]any)
		version := 0
		if v, ok := t.Params["workflowVersion"].(float64); ok {
			version = int(v)
		}
		if w, ok := t.Params["wait"]; ok && (w == false || w == "false") {
			wait = false
		}
		ref := domain.Text(t.Params["workflowRef"])
		if team, name, ok := workflowid.Parse(ref); ok {
			ref = team + "/" + name // a workflow's id names its team too
		}
		if team, name, ok := strings.Cut(ref, "/"); ok {
			if team != r.Team {
				m.Fail(i, domain.Invalid, fmt.Sprintf("runworkflow may only start workflows of team '%s', not '%s'", r.Team, team))
				return nil
			}
			ref = name
		}
		var secret []string
		if slices.Contains(t.SecretParams, "params") {
			// Which of them came from a secret is not kept: each is taken for one.
			secret = slices.Sorted(maps.Keys(p))
		}
		s = Submission{Team: r.Team, Workflow: ref, Version: version, Request: domain.SubmitRequest{Params: maps.Clone(p), Secret: secret},
			Key: fmt.Sprintf("child/%s/%d/%d", r.ID, i, attempt), Trigger: "task", Start: wait,
			By:        domain.Initiator{Type: "workflowrun", ID: r.ID, Name: r.Workflow},
			ParentRun: r.ID, ParentTask: t.Name, Ancestors: r.Lineage(), Depth: r.Depth + 1, SharesSlot: wait}
		return errSkip
	}); err != nil && !errors.Is(err, errSkip) {
		e.log.Warn("cannot start child run", "run", run, "error", err)
		return
	}
	if s.Workflow == "" {
		return
	}
	// A stop above the parent that this replica has not heard of yet: no child then, the
	// stop's cascade takes the parent. (The parent itself is checked by the steps, on
	// its stored state.)
	above := s.Ancestors[:len(s.Ancestors)-1]
	if stopped, err := e.stoppedAbove(ctx, above); stopped != "" {
		return
	} else if err != nil {
		// Going on is safe: the checks once the child exists, and the reconciler, find
		// the stop; stopping here would leave the parent waiting for nothing.
		e.log.Warn("cannot read the runs above a child run", "run", run, "error", err)
	}
	// fail is how the task ends when there is no child: invalid when the limit forbids
	// one, failed when submitting it failed.
	var child RunView
	fail, failMsg := domain.Failed, ""
	tc, err := e.ctxs.get(ctx, s.Team)
	var below int64
	if err == nil && s.Depth <= tc.maxDepth() {
		below, err = e.store.CountDescendants(ctx, s.Ancestors[0])
	}
	switch {
	case err != nil:
		failMsg = "cannot start the child run: " + errMessage(err)
	case s.Depth > tc.maxDepth():
		fail, failMsg = domain.Invalid, fmt.Sprintf("the child run would be nested %d deep, deeper than the limit of %d (setting runs.maxDepth)",
			s.Depth, tc.maxDepth())
	case below >= int64(tc.maxTreeRuns()):
		fail, failMsg = domain.Invalid, fmt.Sprintf("run %s already has %d runs below it, the limit (setting runs.maxTreeRuns)",
			s.Ancestors[0], below)
	default:
		if child, _, err = e.Submit(ctx, s); err != nil {
			failMsg = "cannot start the child run: " + errMessage(err)
		}
	}
	wanted := true
	err2 := e.with(ctx, run, func(m *domain.Machine) error {
		wanted = true
		if failMsg != "" {
			if m.S.Tasks[i].Attempt == attempt {
				m.Fail(i, fail, failMsg)
			}
			return nil
		}
		wanted = m.ChildStarted(i, attempt, child.ID, wait)
		return nil
	})
	if err2 != nil {
		// The parent's next load re-derives the start; the same key finds this child.
		e.log.Warn("cannot record child run", "run", run, "error", err2)
	}
	if failMsg != "" {
		return
	}
	if !wanted {
		e.cancelRun(ctx, child.ID, "cancelled: its parent run "+run+" no longer waits for it")
		return
	}
	if stopped, err := e.stoppedAbove(ctx, above); err == nil && stopped != "" {
		e.cancelRun(ctx, child.ID, "cancelled: run "+stopped+" above it was stopped")
		return
	}
	// The child may have ended before its parent recorded it, its news ignored then: read
	// it again now that the parent knows it.
	if cur, err := e.store.FindRun(ctx, child.ID, false); err == nil && cur.Phase.Ended() {
		results := map[string]string{}
		for k, v := range cur.Results {
			results[k] = domain.Text(v)
		}
		if err := e.childEnded(ctx, run, s.ParentTask, cur.ID, cur.Status, results, cur.SecretResults); err != nil {
			e.log.Warn("cannot tell the parent run", "run", run, "child", cur.ID, "error", err)
		}
	}
}

// cancelRun cancels a run the engine no longer wants (a parent's cancel cascading, a child
// its task stopped waiting for); one that ended or is gone meanwhile is left as it is.
func (e *Engine) cancelRun(ctx context.Context, id, why string) {
	if err := e.Cancel(ctx, id, why); err != nil && !isPhase(err) && !apperr.HasReason(err, apperr.WorkflowRunNotFound) && ctx.Err() == nil {
		e.log.Warn("cannot cancel run", "run", id, "error", err)
	}
}

// cancelDescendants cancels the runs in flight below a run that stopped (Run.Stopped), at
// every depth at once: a tree still growing is not outrun level by level. A child created
// after the list was read finds the stop when it is recorded (startChild); one whose
// cancel a crash lost is found by the reconciler (cancelOrphans).
func (e *Engine) cancelDescendants(ctx context.Context, id string, why domain.Status) {
	ids, err := e.store.FindDescendants(ctx, id)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("cannot list the runs below a stopped run", "run", id, "error", err)
		}
		return
	}
	for _, d := range ids {
		e.cancelRun(ctx, d, fmt.Sprintf("cancelled: run %s above it was %s", id, why))
	}
}

// stoppedAbove answers the first of ancestors that was stopped, if any.
func (e *Engine) stoppedAbove(ctx context.Context, ancestors []string) (string, error) {
	if len(ancestors) == 0 {
		return "", nil
	}
	stopped, err := e.store.FindStopped(ctx, ancestors)
	if err != nil {
		return "", err
	}
	for _, a := range ancestors {
		if stopped[a] {
			return a, nil
		}
	}
	return "", nil
}

// errSkip ends a with() without storing anything.
var errSkip = errors.New("nothing to do")

// childEnded gives a parent run's runworkflow task its child's end.
func (e *Engine) childEnded(ctx context.Context, parent, task, child string, status domain.Status, results map[string]string, secret []string) error {
	err := e.with(ctx, parent, func(m *domain.Machine) error {
		i, ok := m.S.G.Index[task]
		if !ok {
			return errSkip
		}
		m.ChildEnded(i, child, status, results, secret)
		return nil
	})
	if errors.Is(err, errSkip) || apperr.HasReason(err, apperr.WorkflowRunNotFound) {
		return nil
	}
	return err
}

// contextCache keeps teams' run contexts briefly: a burst of submits asks identity once.
type contextCache struct {
	src Contexts
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]cachedContext
}

type cachedContext struct {
	tc  TeamContext
	exp time.Time
}

func newContextCache(src Contexts, ttl time.Duration) *contextCache {
	return &contextCache{src: src, ttl: ttl, m: map[string]cachedContext{}}
}

func (c *contextCache) get(ctx context.Context, team string) (TeamContext, error) {
	c.mu.Lock()
	if v, ok := c.m[team]; ok && time.Now().Before(v.exp) {
		c.mu.Unlock()
		return v.tc, nil
	}
	c.mu.Unlock()
	tc, err := c.src.RunContext(ctx, team)
	if err != nil {
		return TeamContext{}, err
	}
	c.mu.Lock()
	c.m[team] = cachedContext{tc: tc, exp: time.Now().Add(c.ttl)}
	c.mu.Unlock()
	return tc, nil
}

func errMessage(err error) string {
	if ae, ok := apperr.As(err); ok {
		return ae.Message
	}
	return err.Error()
}

func sortActive(a []mongostore.Active) {
	slices.SortFunc(a, func(x, y mongostore.Active) int {
		if c := x.Created.Compare(y.Created); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
}
