package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

const (
	kindWorkflow = "Workflow"
	kindTemplate = "Template"
	// resource is the permission resource of team workflows.
	resource = "workflow"
	// quotaRetryAfter is the Retry-After of a full quota: only a delete frees room, so
	// clients should not come back at once.
	quotaRetryAfter = time.Minute
	// maxCopies bounds the `-copy-N` names a duplicate tries.
	maxCopies = 100
)

// WorkflowsDeps are what the workflow use cases need.
type WorkflowsDeps struct {
	Store   DefinitionStore
	Teams   TeamStore
	Counter QuotaCounter
	Limits  QuotaSource
	Tasks   TaskResolver
	Runs    RunChecker
	Params  ParamSource
	Relay   Relay
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Workflows is the team workflow use cases. Every method authorizes the principal of its
// context: `workflow/<action>` in the team, or in the workflow when one is named, so a
// workflow token reaches its own workflow only.
type Workflows struct {
	defs    *definitions
	teams   TeamStore
	counter QuotaCounter
	limits  QuotaSource
	runs    RunChecker
	params  ParamSource
	relay   Relay
	source  string
}

// NewWorkflows returns the workflow use cases.
func NewWorkflows(d WorkflowsDeps) *Workflows {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Workflows{
		defs:  &definitions{store: d.Store, tasks: d.Tasks, now: d.Now, kind: kindWorkflow},
		teams: d.Teams, counter: d.Counter, limits: d.Limits, runs: d.Runs, params: d.Params, relay: d.Relay,
		source: events.Source("workflows"),
	}
}

func namespace(t domain.Team) domain.Namespace { return domain.Namespace{Team: t.Name, TeamID: t.ID} }

// authorize checks the caller may do action on workflows of team (on workflow, when set)
// and returns it and the team, which must be known. Permission comes first, so callers
// learn nothing about teams they cannot see.
func (s *Workflows) authorize(ctx context.Context, team, workflow, action string) (auth.Principal, domain.Team, error) {
	p, err := auth.Require(ctx, auth.Scope{Team: team, Workflow: workflow}, resource, action)
	if err != nil {
		return auth.Principal{}, domain.Team{}, err
	}
	t, err := s.teams.FindTeamByName(ctx, team)
	if err != nil {
		return auth.Principal{}, domain.Team{}, err
	}
	return p, t, nil
}

// Create creates a workflow from body (POST): version 1, named after the slug of its name.
// Read-only fields of the body (as in an export) are ignored.
func (s *Workflows) Create(ctx context.Context, team string, body domain.Workflow) (domain.Workflow, error) {
	p, t, err := s.authorize(ctx, team, "", "write")
	if err != nil {
		return domain.Workflow{}, err
	}
	name, err := domain.NewName(body.Name)
	if err != nil {
		return domain.Workflow{}, err
	}
	w, _, err := s.save(ctx, p, t, name, body, modeCreate, false)
	return w, err
}

// PutMode is how a PUT saves: Replace overwrites the latest version rather than adding
// one; DryRun answers what would be saved, saving nothing.
type PutMode struct {
	Replace, DryRun bool
}

// Put saves body as a new version of the workflow its name names, or with replace over the
// latest version; either creates the workflow when it does not exist. created reports that.
// A body that is the latest version already saves nothing and answers that version.
func (s *Workflows) Put(ctx context.Context, team string, body domain.Workflow, m PutMode) (w domain.Workflow, created bool, err error) {
	p, t, err := s.authorize(ctx, team, "", "write")
	if err != nil {
		return domain.Workflow{}, false, err
	}
	name, err := domain.NewName(body.Name)
	if err != nil {
		return domain.Workflow{}, false, err
	}
	return s.save(ctx, p, t, name, body, putMode(m.Replace), m.DryRun)
}

func putMode(replace bool) saveMode {
	if replace {
		return modeReplace
	}
	return modeVersion
}

// save validates body as workflow name of t and stores it.
func (s *Workflows) save(ctx context.Context, p auth.Principal, t domain.Team, name string, body domain.Workflow, mode saveMode, dryRun bool) (domain.Workflow, bool, error) {
	w := body
	if strings.TrimSpace(w.DisplayName) == "" {
		w.DisplayName = strings.TrimSpace(body.Name)
		if w.DisplayName == "" {
			w.DisplayName = name
		}
	}
	w.Name = name
	w.Normalize()
	if err := s.defs.validate(ctx, &w, domain.ValidateOptions{Team: t.Name}); err != nil {
		return domain.Workflow{}, false, err
	}
	author := authorName(p)
	out, sv, err := s.defs.save(ctx, saveRequest{
		ns: namespace(t), def: w, mode: mode, dryRun: dryRun,
		changelog: domain.Changelog{Author: author, Reason: changelogReason(body)},
		reserve:   func(ctx context.Context) (func(), error) { return s.reserve(ctx, t) },
		owe: func(sv saved) ([]outbox.Entry, error) {
			return s.savedEvent(t, sv, w, author)
		},
	})
	if err != nil {
		return domain.Workflow{}, false, err
	}
	s.relay.Nudge()
	return out, sv.Created, nil
}

// reserve takes room for one more workflow of t, atomically against its limit.
func (s *Workflows) reserve(ctx context.Context, t domain.Team) (func(), error) {
	limit, err := s.limits.MaxWorkflowCount(ctx, t.Name)
	if err != nil {
		return nil, err
	}
	ok, err := s.counter.ReserveWorkflow(ctx, t, limit)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apperr.New(apperr.QuotaExceeded, "Team '%s' has reached its limit of %d workflows.", t.Name, limit).
			WithRetryAfter(quotaRetryAfter)
	}
	return func() { _ = s.counter.ReleaseWorkflow(context.WithoutCancel(ctx), t) }, nil
}

func (s *Workflows) savedEvent(t domain.Team, sv saved, w domain.Workflow, author string) ([]outbox.Entry, error) {
	tr := w.Triggers
	data := events.WorkflowSaved{
		Team: t.Name, Name: w.Name, Version: sv.Revision.Version, Created: sv.Created, Replaced: sv.Replaced,
		DisplayName: w.DisplayName, Status: string(w.Status), Author: author, Date: sv.Revision.Changelog.Date.Time,
		Triggers: events.WorkflowTriggers{
			Manual: tr.Manual.On(), Schedule: tr.Schedule.On(), Webhook: tr.Webhook.On(), Event: tr.Event.On(),
			Codehost: tr.CodehostTrigger().On(),
		},
	}
	return s.event(t, sv.Seq, w.Name, events.TypeWorkflowSaved, "saved", data)
}

// event builds the outbox entry of one catalog change. Its id is the catalog's sequence in
// the team's incarnation: stable, so a re-published event is dropped as a duplicate.
func (s *Workflows) event(t domain.Team, seq int64, name, typ, what string, data any) ([]outbox.Entry, error) {
	e, err := events.New(fmt.Sprintf("workflow-%s-%s-%d", what, t.ID, seq), s.source, typ,
		"/team/"+t.Name+"/workflow/"+name, data)
	if err != nil {
		return nil, err
	}
	entry, err := outbox.NewEntry(events.WorkflowEvents, t.Name+"/"+name, e)
	if err != nil {
		return nil, err
	}
	return []outbox.Entry{entry}, nil
}

// Get reads version (0: the latest) of a workflow for rendering, without its tasks unless
// withTasks.
func (s *Workflows) Get(ctx context.Context, team, name string, version int, withTasks bool) (domain.Workflow, error) {
	return s.read(ctx, team, name, version, rendering(withTasks))
}

func (s *Workflows) read(ctx context.Context, team, name string, version int, load domain.Load) (domain.Workflow, error) {
	_, t, err := s.authorize(ctx, team, name, "read")
	if err != nil {
		return domain.Workflow{}, err
	}
	w, _, err := s.defs.get(ctx, namespace(t), name, version, load)
	return w, err
}

// Snapshot reads version (0: the latest) of a workflow with its tasks and its secrets
// unmasked, for the runs service to keep with a run. Only Baton's own services may call it.
func (s *Workflows) Snapshot(ctx context.Context, team, name string, version int) (domain.Workflow, error) {
	if _, err := auth.RequireService(ctx); err != nil {
		return domain.Workflow{}, err
	}
	t, err := s.teams.FindTeamByName(ctx, team)
	if err != nil {
		return domain.Workflow{}, err
	}
	ns := namespace(t)
	e, err := s.defs.entry(ctx, ns, name)
	if err != nil {
		return domain.Workflow{}, err
	}
	if version == 0 {
		version = e.Latest
	}
	if version < 1 || version > e.Latest {
		return domain.Workflow{}, apperr.New(apperr.WorkflowRevisionNotFound,
			"Workflow '%s' has no version %d; its latest is %d.", name, version, e.Latest)
	}
	r, err := s.defs.store.FindRevision(ctx, ns, name, version, e.RevOf(version), domain.LoadTasks)
	if err != nil {
		return domain.Workflow{}, err
	}
	w := r.Workflow
	w.Name, w.Team, w.Version = e.Name, ns.Team, r.Version
	w.ID = workflowid.Of(ns.Team, e.Name)
	w.CreationDate = domain.NewTime(e.CreationDate)
	return w, nil
}

// TriggerOf is one workflow's latest version and its trigger of one kind.
type TriggerOf struct {
	Name    string
	Status  domain.Status
	Version int
	Trigger domain.Trigger
}

// Triggered answers which of the team's workflows the trigger kind (manual, schedule,
// webhook, event, codehost; github reads as codehost) starts: with workflow, that one
// with its trigger of the kind, enabled or not; without, those whose trigger of the kind
// is enabled, in name order. Both read latest versions. Only Baton's own services may
// call it: the integrations service asks before it starts runs from events, webhooks and
// code-host deliveries.
func (s *Workflows) Triggered(ctx context.Context, team, kind, workflow string) ([]TriggerOf, error) {
	if _, err := auth.RequireService(ctx); err != nil {
		return nil, err
	}
	pick, err := triggerKind(kind)
	if err != nil {
		return nil, err
	}
	t, err := s.teams.FindTeamByName(ctx, team)
	if err != nil {
		return nil, err
	}
	ns := namespace(t)
	var entries []domain.Entry
	if workflow != "" {
		e, err := s.defs.entry(ctx, ns, workflow)
		if err != nil {
			return nil, err
		}
		entries = []domain.Entry{e}
	} else {
		cat, err := s.defs.store.Catalog(ctx, ns)
		if err != nil {
			return nil, err
		}
		entries = slices.SortedFunc(slices.Values(cat.Entries()), func(a, b domain.Entry) int { return strings.Compare(a.Name, b.Name) })
	}
	summaries, err := s.defs.summaries(ctx, ns, entries)
	if err != nil {
		return nil, err
	}
	out := make([]TriggerOf, 0, len(summaries))
	for _, w := range summaries {
		tr := pick(w.Triggers)
		if workflow == "" && !tr.On() {
			continue
		}
		of := TriggerOf{Name: w.Name, Status: w.Status, Version: w.Version}
		if tr != nil {
			of.Trigger = *tr
		}
		out = append(out, of)
	}
	return out, nil
}

// triggerKind returns how to read the trigger of kind from a workflow's triggers.
func triggerKind(kind string) (func(*domain.Triggers) *domain.Trigger, error) {
	switch kind {
	case "manual", "schedule", "webhook", "event", "codehost", "github":
	default:
		return nil, apperr.Invalid(apperr.RequestInvalid, "kind must be manual, schedule, webhook, event or codehost.",
			apperr.FieldError{Field: "kind", Message: "unknown trigger kind '" + kind + "'"})
	}
	return func(t *domain.Triggers) *domain.Trigger {
		if t == nil {
			t = &domain.Triggers{}
		}
		switch kind {
		case "manual":
			// The manual trigger is on unless a workflow turns it off.
			if t.Manual == nil {
				return &domain.Trigger{Enabled: true}
			}
			return t.Manual
		case "schedule":
			return t.Schedule
		case "webhook":
			return t.Webhook
		case "event":
			return t.Event
		}
		return t.CodehostTrigger()
	}, nil
}

// Delete deletes a workflow and announces it; schedules and workflow tokens follow the
// event. It refuses while runs are not completed, unless force cancels them first.
func (s *Workflows) Delete(ctx context.Context, team, name string, force bool) error {
	_, t, err := s.authorize(ctx, team, name, "delete")
	if err != nil {
		return err
	}
	ns := namespace(t)
	if _, err := s.defs.entry(ctx, ns, name); err != nil {
		return err
	}
	active, err := s.runs.ActiveRuns(ctx, team, name)
	if err != nil {
		return err
	}
	if active > 0 {
		if !force {
			return apperr.New(apperr.WorkflowHasActiveRuns,
				"Workflow '%s' has %d runs that are not completed; cancel them or delete with force=true.", name, active)
		}
		if err := s.runs.CancelRuns(ctx, team, name); err != nil {
			return err
		}
	}
	_, err = s.defs.remove(ctx, ns, name, func(e domain.Entry, seq int64) ([]outbox.Entry, error) {
		return s.event(t, seq, name, events.TypeWorkflowDeleted, "deleted",
			events.WorkflowDeleted{Team: t.Name, Name: name, Version: e.Latest, Date: s.defs.now().UTC().Truncate(time.Millisecond)})
	})
	if err != nil {
		return err
	}
	_ = s.counter.ReleaseWorkflow(context.WithoutCancel(ctx), t)
	s.relay.Nudge()
	return nil
}

// Duplicate copies the latest version of a workflow, triggers included, under the first
// free name of `<name>-copy`, `<name>-copy-2`, …
func (s *Workflows) Duplicate(ctx context.Context, team, name string) (domain.Workflow, error) {
	p, t, err := s.authorize(ctx, team, "", "write")
	if err != nil {
		return domain.Workflow{}, err
	}
	if _, err := auth.Require(ctx, auth.Scope{Team: team, Workflow: name}, resource, "read"); err != nil {
		return domain.Workflow{}, err
	}
	ns := namespace(t)
	e, err := s.defs.entry(ctx, ns, name)
	if err != nil {
		return domain.Workflow{}, err
	}
	// The stored revision, not the view: password values must be copied, not their mask.
	src, err := s.defs.store.FindRevision(ctx, ns, name, e.Latest, e.RevOf(e.Latest), domain.LoadTasks)
	if err != nil {
		return domain.Workflow{}, err
	}
	for n := 1; n <= maxCopies; n++ {
		copyName := domain.CopyName(name, n)
		if cat, err := s.defs.store.Catalog(ctx, ns); err != nil {
			return domain.Workflow{}, err
		} else if _, taken := cat.Entry(copyName); taken {
			continue
		}
		w := src.Workflow.Clone()
		w.Name = copyName
		if w.DisplayName != "" {
			w.DisplayName += " (copy)"
		}
		w.Changelog = &domain.Changelog{Reason: fmt.Sprintf("Duplicated from '%s' version %d.", name, e.Latest)}
		out, _, err := s.save(ctx, p, t, copyName, w, modeCreate, false)
		if apperr.HasReason(err, apperr.WorkflowAlreadyExists) {
			continue // taken meanwhile: try the next name
		}
		return out, err
	}
	return domain.Workflow{}, apperr.New(apperr.WorkflowAlreadyExists, "Workflow '%s' has too many copies already.", name)
}

// Export returns the latest version of a workflow, as its export file holds it.
func (s *Workflows) Export(ctx context.Context, team, name string) (domain.Workflow, error) {
	return s.Get(ctx, team, name, 0, true)
}

// ExportAnywhere exports the workflow called name from whichever of the caller's teams has
// one (v4's team-less path). `<team>/<name>` names the team. A name held by several of the
// caller's teams is refused as ambiguous rather than guessed.
func (s *Workflows) ExportAnywhere(ctx context.Context, name string) (domain.Workflow, error) {
	if team, wf, ok := strings.Cut(name, "/"); ok {
		return s.Export(ctx, team, wf)
	}
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous {
		return domain.Workflow{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	var candidates []string
	if p.SeesAllTeams() {
		teams, err := s.teams.ListTeams(ctx)
		if err != nil {
			return domain.Workflow{}, err
		}
		for _, t := range teams {
			candidates = append(candidates, t.Name)
		}
	} else {
		for team := range p.Teams {
			candidates = append(candidates, team)
		}
		if p.Team != "" {
			candidates = append(candidates, p.Team)
		}
	}
	slices.Sort(candidates)
	var found []string
	for _, team := range slices.Compact(candidates) {
		if !p.Can(auth.Scope{Team: team, Workflow: name}, resource, "read") {
			continue
		}
		t, err := s.teams.FindTeamByName(ctx, team)
		if apperr.HasReason(err, apperr.TeamNotFound) {
			continue
		}
		if err != nil {
			return domain.Workflow{}, err
		}
		cat, err := s.defs.store.Catalog(ctx, namespace(t))
		if err != nil {
			return domain.Workflow{}, err
		}
		if _, ok := cat.Entry(name); ok {
			found = append(found, team)
		}
	}
	switch len(found) {
	case 0:
		return domain.Workflow{}, apperr.New(apperr.WorkflowNotFound, "No team of yours has a workflow named '%s'.", name)
	case 1:
		return s.Export(ctx, found[0], name)
	default:
		return domain.Workflow{}, apperr.Invalid(apperr.WorkflowInvalidReq,
			fmt.Sprintf("Teams %s each have a workflow named '%s'; export it from /api/v2/team/{team}/workflow/%s/export.",
				strings.Join(found, ", "), name, name),
			apperr.FieldError{Field: "name", Message: "is ambiguous"})
	}
}

// Changelog lists every version's changelog, newest first.
func (s *Workflows) Changelog(ctx context.Context, team, name string) ([]domain.ChangelogEntry, error) {
	_, t, err := s.authorize(ctx, team, name, "read")
	if err != nil {
		return nil, err
	}
	return s.defs.changelog(ctx, namespace(t), name)
}

// Query returns a page of the team's workflows (latest versions, without tasks).
func (s *Workflows) Query(ctx context.Context, team string, f domain.Filter, p page.Request) (page.Page[domain.Workflow], error) {
	_, t, err := s.authorize(ctx, team, "", "read")
	if err != nil {
		return page.Page[domain.Workflow]{}, err
	}
	return s.defs.query(ctx, namespace(t), f, p)
}

// AvailableParameters lists what the tasks of a workflow's latest version may reference.
func (s *Workflows) AvailableParameters(ctx context.Context, team, name string) ([]string, error) {
	_, t, err := s.authorize(ctx, team, name, "read")
	if err != nil {
		return nil, err
	}
	w, _, err := s.defs.get(ctx, namespace(t), name, 0, domain.LoadTasks)
	if err != nil {
		return nil, err
	}
	global, err := s.params.GlobalParams(ctx)
	if err != nil {
		return nil, err
	}
	teamParams, err := s.params.TeamParams(ctx, team)
	if err != nil {
		return nil, err
	}
	results, err := s.taskResults(ctx, w)
	if err != nil {
		return nil, err
	}
	return domain.AvailableParameters(w, global, teamParams, results), nil
}

// taskResults maps each task of w to the results its pinned catalogue task declares.
func (s *Workflows) taskResults(ctx context.Context, w domain.Workflow) (map[string][]string, error) {
	found, err := s.defs.lookup(ctx, w.Tasks, nil)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, t := range w.Tasks {
		out[t.Name] = found[refKeyOf(t)].Results
	}
	return out, nil
}

// Canvas returns version (0: the latest) of a workflow as its canvas.
func (s *Workflows) Canvas(ctx context.Context, team, name string, version int) (domain.Canvas, error) {
	w, err := s.read(ctx, team, name, version, domain.LoadTasks)
	if err != nil {
		return domain.Canvas{}, err
	}
	s.defs.catalogueRefs(ctx, &w)
	return domain.ToCanvas(w)
}

// PutCanvas saves a canvas as a new version of workflow name (or over its latest with
// replace), creating it when it does not exist, and returns the saved version's canvas.
func (s *Workflows) PutCanvas(ctx context.Context, team, name string, c domain.Canvas, replace bool) (domain.Canvas, bool, error) {
	p, t, err := s.authorize(ctx, team, name, "write")
	if err != nil {
		return domain.Canvas{}, false, err
	}
	if err := domain.SameName(name, c.Workflow.Name); err != nil {
		return domain.Canvas{}, false, err
	}
	if _, err := domain.NewName(name); err != nil {
		return domain.Canvas{}, false, err
	}
	w, problems := domain.FromCanvas(c)
	if err := domain.Invalid(problems); err != nil {
		return domain.Canvas{}, false, err
	}
	if w.Name == "" {
		w.Name = name
	}
	saved, created, err := s.save(ctx, p, t, name, w, putMode(replace), false)
	if err != nil {
		return domain.Canvas{}, false, err
	}
	s.defs.catalogueRefs(ctx, &saved)
	out, err := domain.ToCanvas(saved)
	return out, created, err
}
