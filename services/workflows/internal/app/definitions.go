package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/libs/workflowid"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// definitions holds what workflows and templates share: validating a body, storing it as
// a version, and reading versions, changelogs and pages back.
type definitions struct {
	store DefinitionStore
	tasks TaskResolver
	now   func() time.Time
	// kind names the resource in messages: "Workflow" or "Template".
	kind string
}

// Save modes.
type saveMode int

const (
	// modeCreate creates version 1 and fails if the name exists (POST).
	modeCreate saveMode = iota
	// modeVersion adds a version, or creates (PUT).
	modeVersion
	// modeReplace overwrites the latest version in place, or creates (PUT ?replace=true).
	modeReplace
)

// saveRequest is one save of a definition.
type saveRequest struct {
	ns   domain.Namespace
	def  domain.Workflow
	mode saveMode
	// changelog is the reason given and the author; the date is set on save.
	changelog domain.Changelog
	// reserve, when set, is asked for room before a save creates (the workflow quota) and
	// returns how to give the room back.
	reserve func(ctx context.Context) (release func(), err error)
	// owe returns the events a save owes, stored with the catalog that records it.
	owe func(s saved) ([]outbox.Entry, error)
	// dryRun answers what the save would store, storing nothing.
	dryRun bool
}

// saved describes a stored save.
type saved struct {
	Entry    domain.Entry
	Revision domain.Revision
	Seq      int64
	Created  bool
	Replaced bool
	// Unchanged: the definition was the latest version's already; nothing was written.
	Unchanged bool
}

// errNeedsRoom: the name vanished while saving; the save must reserve room and try again.
var errNeedsRoom = errors.New("definition must be created")

// maxRoomRetries bounds how often a save chases a name that is deleted under it.
const maxRoomRetries = 3

// save validates nothing: callers have. It stores def as its name's next version (or
// creates it, or replaces the latest), and returns the saved version as read back.
func (d *definitions) save(ctx context.Context, req saveRequest) (domain.Workflow, saved, error) {
	name := req.def.Name
	for range maxRoomRetries {
		cat, err := d.store.Catalog(ctx, req.ns)
		if err != nil {
			return domain.Workflow{}, saved{}, err
		}
		_, exists := cat.Entry(name)
		if exists && req.mode == modeCreate {
			return domain.Workflow{}, saved{}, d.errExists(name)
		}
		if err := d.keepSecrets(ctx, req.ns, &req.def, cat); err != nil {
			return domain.Workflow{}, saved{}, err
		}
		if exists && req.mode != modeCreate {
			if view, s, same, err := d.unchanged(ctx, req, cat); err != nil || same {
				return view, s, err
			}
		}
		if req.dryRun {
			return d.wouldBe(req, cat), saved{Created: !exists, Replaced: exists && req.mode == modeReplace, Seq: cat.Seq}, nil
		}
		var release func()
		if !exists && req.reserve != nil {
			if release, err = req.reserve(ctx); err != nil {
				return domain.Workflow{}, saved{}, err
			}
		}
		s, err := d.commit(ctx, req, release != nil || req.reserve == nil)
		if release != nil && (err != nil || !s.Created) {
			release()
		}
		if errors.Is(err, errNeedsRoom) {
			continue
		}
		if err != nil {
			return domain.Workflow{}, saved{}, err
		}
		return d.view(req.ns, s.Entry, s.Revision), s, nil
	}
	return domain.Workflow{}, saved{}, apperr.New(apperr.ConcurrentModification,
		"%s '%s' is being created and deleted by others; try again.", d.kind, name)
}

// unchanged reports whether req would store what the latest version of its name holds
// already, and answers that version then: saving the same definition again writes
// nothing and makes no version (an apply run twice changes nothing the second time).
func (d *definitions) unchanged(ctx context.Context, req saveRequest, cat *domain.Catalog) (domain.Workflow, saved, bool, error) {
	e, _ := cat.Entry(req.def.Name)
	prev, err := d.store.FindRevision(ctx, req.ns, e.Name, e.Latest, e.RevOf(e.Latest), domain.LoadTasks)
	if apperr.HasReason(err, apperr.WorkflowRevisionNotFound) {
		return domain.Workflow{}, saved{}, false, nil // replaced meanwhile: saved as a change
	}
	if err != nil {
		return domain.Workflow{}, saved{}, false, err
	}
	was, err := canonical(prev.Workflow)
	if err != nil {
		return domain.Workflow{}, saved{}, false, err
	}
	now, err := canonical(req.def.Definition())
	if err != nil {
		return domain.Workflow{}, saved{}, false, err
	}
	if !bytes.Equal(was, now) {
		return domain.Workflow{}, saved{}, false, nil
	}
	return d.view(req.ns, e, prev), saved{Entry: e, Revision: prev, Seq: cat.Seq, Unchanged: true}, true, nil
}

// wouldBe is the version req would store, as a read would answer it.
func (d *definitions) wouldBe(req saveRequest, cat *domain.Catalog) domain.Workflow {
	e, exists := cat.Entry(req.def.Name)
	version := 1
	switch {
	case !exists:
		e = domain.Entry{Name: req.def.Name, CreationDate: d.now()}
	case req.mode == modeReplace:
		version = e.Latest
	default:
		version = e.Latest + 1
	}
	changelog := req.changelog
	changelog.Date = domain.NewTime(d.now())
	return d.view(req.ns, e, domain.Revision{Name: req.def.Name, Version: version, Changelog: changelog, Workflow: req.def.Definition()})
}

// canonical is w as JSON, written one way whichever way it was saved: a trigger other
// than manual that is off and has no conditions is as good as absent (a canvas lists them
// all), and no conditions as none.
func canonical(w domain.Workflow) ([]byte, error) {
	raw, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if triggers, ok := doc["triggers"].(map[string]any); ok {
		for kind, v := range triggers {
			t, ok := v.(map[string]any)
			if !ok {
				continue
			}
			if c, ok := t["conditions"].([]any); ok && len(c) == 0 {
				delete(t, "conditions")
			}
			if on, _ := t["enabled"].(bool); kind != "manual" && !on && len(t) == 1 {
				delete(triggers, kind)
			}
		}
	}
	return json.Marshal(doc) // maps as JSON: keys sorted
}

// commit stores the revision and the catalog recording it. mayCreate says whether room
// was reserved for creating.
func (d *definitions) commit(ctx context.Context, req saveRequest, mayCreate bool) (saved, error) {
	def := req.def.Definition()
	date := domain.NewTime(d.now())
	changelog := req.changelog
	changelog.Date = date
	var out saved
	// stored remembers the revision of an earlier attempt: when the catalog changed only
	// elsewhere, the retry records the same revision instead of storing another.
	var stored *domain.Revision
	var superseded int // the revision a replace took the place of
	_, err := d.store.UpdateCatalog(ctx, req.ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
		prev, exists := next.Entry(def.Name)
		superseded = 0
		s := saved{Seq: next.Seq}
		version, rev := 1, 1
		switch {
		case !exists && !mayCreate:
			return nil, errNeedsRoom
		case !exists:
			s.Created = true
		case req.mode == modeCreate:
			return nil, d.errExists(def.Name)
		case req.mode == modeReplace:
			version, rev = prev.Latest, prev.RevOf(prev.Latest)+1
			superseded = prev.RevOf(prev.Latest)
			s.Replaced = true
		default:
			version = prev.Latest + 1
		}
		if stored == nil || stored.Version != version || stored.Rev < rev {
			r := domain.Revision{Name: def.Name, Version: version, Rev: rev, Changelog: changelog, Workflow: def}
			got, err := d.store.InsertRevision(ctx, req.ns, r)
			if err != nil {
				return nil, err
			}
			r.Rev = got
			stored = &r
		}
		entry := domain.Entry{
			Name: def.Name, Latest: version, Revs: prev.Revs, Status: def.Status, Labels: def.Labels,
			CreationDate: prev.CreationDate,
		}
		if s.Created {
			entry.CreationDate, entry.Revs = date.Time, nil
		}
		s.Entry = entry.WithRev(version, stored.Rev)
		s.Revision = *stored
		next.Put(s.Entry)
		out = s
		if req.owe == nil {
			return nil, nil
		}
		return req.owe(s)
	})
	if err == nil && superseded > 0 {
		d.store.CollectRevision(req.ns, def.Name, out.Revision.Version, superseded)
	}
	return out, err
}

// keepSecrets puts back password values sent as the mask, those of tasks' password params
// and forms' password fields too, from the latest version.
func (d *definitions) keepSecrets(ctx context.Context, ns domain.Namespace, def *domain.Workflow, cat *domain.Catalog) error {
	if !def.HasMaskedSecrets() {
		return nil
	}
	e, ok := cat.Entry(def.Name)
	if !ok {
		// nothing to keep: the mask is no value
		def.KeepSecrets(nil)
		def.KeepTaskSecrets(nil)
		return nil
	}
	load := domain.LoadSummary
	if def.HasMaskedTaskSecrets() {
		load = domain.LoadTasks
	}
	prev, err := d.store.FindRevision(ctx, ns, e.Name, e.Latest, e.RevOf(e.Latest), load)
	if err != nil {
		return err
	}
	def.KeepSecrets(prev.Workflow.Params)
	def.KeepTaskSecrets(prev.Workflow.Tasks)
	return nil
}

func (d *definitions) errExists(name string) error {
	if d.kind == kindTemplate {
		return apperr.New(apperr.WorkflowAlreadyExists, "A template named '%s' already exists.", name)
	}
	return apperr.New(apperr.WorkflowAlreadyExists, "A workflow named '%s' already exists in this team.", name)
}

func (d *definitions) errNotFound(ns domain.Namespace, name string) error {
	if ns.IsTemplates() {
		return apperr.New(apperr.WorkflowNotFound, "Template '%s' was not found.", name)
	}
	return apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found in team '%s'.", name, ns.Team)
}

// entry returns the head of name.
func (d *definitions) entry(ctx context.Context, ns domain.Namespace, name string) (domain.Entry, error) {
	cat, err := d.store.Catalog(ctx, ns)
	if err != nil {
		return domain.Entry{}, err
	}
	e, ok := cat.Entry(name)
	if !ok {
		return domain.Entry{}, d.errNotFound(ns, name)
	}
	return e, nil
}

// get reads version (0: the latest) of name.
func (d *definitions) get(ctx context.Context, ns domain.Namespace, name string, version int, load domain.Load) (domain.Workflow, domain.Entry, error) {
	return d.read(ctx, ns, name, version, load, true)
}

func (d *definitions) read(ctx context.Context, ns domain.Namespace, name string, version int, load domain.Load, retry bool) (domain.Workflow, domain.Entry, error) {
	e, err := d.entry(ctx, ns, name)
	if err != nil {
		return domain.Workflow{}, domain.Entry{}, err
	}
	if version == 0 {
		version = e.Latest
	}
	if version < 1 || version > e.Latest {
		return domain.Workflow{}, domain.Entry{}, apperr.New(apperr.WorkflowRevisionNotFound,
			"%s '%s' has no version %d; its latest is %d.", d.kind, name, version, e.Latest)
	}
	r, err := d.store.FindRevision(ctx, ns, name, version, e.RevOf(version), load)
	if apperr.HasReason(err, apperr.WorkflowRevisionNotFound) && retry {
		// Replaced and collected since the catalog was read: read the new catalog.
		return d.read(ctx, ns, name, version, load, false)
	}
	if err != nil {
		return domain.Workflow{}, domain.Entry{}, err
	}
	return d.view(ns, e, r), e, nil
}

// view fills the read-only fields of a stored revision and hides secrets.
func (d *definitions) view(ns domain.Namespace, e domain.Entry, r domain.Revision) domain.Workflow {
	w := r.Workflow
	w.Name, w.Team, w.Version = e.Name, ns.Team, r.Version
	w.ID = workflowid.Of(ns.Team, e.Name)
	w.CreationDate = domain.NewTime(e.CreationDate)
	changelog := r.Changelog
	w.Changelog = &changelog
	w.MaskSecrets()
	if ns.Team != "" {
		// Templates say only what they set: a workflow made from one decides the rest.
		w.AnswerTriggers()
	}
	return w
}

// fetchConcurrency bounds the revision reads one request makes at a time.
const fetchConcurrency = 8

// summaries reads the latest version of each entry, without tasks, in order.
func (d *definitions) summaries(ctx context.Context, ns domain.Namespace, entries []domain.Entry) ([]domain.Workflow, error) {
	out := make([]domain.Workflow, len(entries))
	err := forEach(ctx, len(entries), func(ctx context.Context, i int) error {
		e := entries[i]
		r, err := d.store.FindRevision(ctx, ns, e.Name, e.Latest, e.RevOf(e.Latest), domain.LoadSummary)
		if err != nil {
			return err
		}
		out[i] = d.view(ns, e, r)
		return nil
	})
	return out, err
}

// rendering is how reads that only render a version load its tasks.
func rendering(withTasks bool) domain.Load {
	if withTasks {
		return domain.LoadRawTasks
	}
	return domain.LoadSummary
}

// query returns a page of the catalog's definitions matching f, without tasks.
func (d *definitions) query(ctx context.Context, ns domain.Namespace, f domain.Filter, p page.Request) (page.Page[domain.Workflow], error) {
	cat, err := d.store.Catalog(ctx, ns)
	if err != nil {
		return page.Page[domain.Workflow]{}, err
	}
	entries, total := cat.Find(f, p)
	content, err := d.summaries(ctx, ns, entries)
	if err != nil {
		return page.Page[domain.Workflow]{}, err
	}
	return page.New(content, p, total), nil
}

// changelog lists every version's changelog, newest first.
func (d *definitions) changelog(ctx context.Context, ns domain.Namespace, name string) ([]domain.ChangelogEntry, error) {
	e, err := d.entry(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	out := make([]domain.ChangelogEntry, e.Latest)
	err = forEach(ctx, e.Latest, func(ctx context.Context, i int) error {
		version := e.Latest - i
		r, err := d.store.FindRevision(ctx, ns, name, version, e.RevOf(version), domain.LoadSummary)
		if err != nil {
			return err
		}
		out[i] = domain.ChangelogEntry{Version: version, Author: r.Changelog.Author, Reason: r.Changelog.Reason, Date: r.Changelog.Date}
		return nil
	})
	return out, err
}

// remove deletes name from the catalog with the events owe returns, then collects its
// revisions.
func (d *definitions) remove(ctx context.Context, ns domain.Namespace, name string, owe func(e domain.Entry, seq int64) ([]outbox.Entry, error)) (domain.Entry, error) {
	var removed domain.Entry
	_, err := d.store.UpdateCatalog(ctx, ns, func(next *domain.Catalog) ([]outbox.Entry, error) {
		e, ok := next.Entry(name)
		if !ok {
			return nil, d.errNotFound(ns, name)
		}
		next.Remove(name)
		removed = e
		if owe == nil {
			return nil, nil
		}
		return owe(e, next.Seq)
	})
	if err != nil {
		return domain.Entry{}, err
	}
	// The catalog no longer names these revisions, and a workflow created again under the
	// name gets fresh ones. Only the revisions the catalog named are collected, each by its
	// one owner here (those a replace superseded were that replace's to collect): an id
	// collected twice could belong to a new workflow of the same name by the second time.
	for v := 1; v <= removed.Latest; v++ {
		d.store.CollectRevision(ns, name, v, removed.RevOf(v))
	}
	return removed, nil
}

// validate checks def and resolves its task references, pinning their versions. Problems
// answer 400 with all of them; an unreachable tasks service answers 503.
func (d *definitions) validate(ctx context.Context, def *domain.Workflow, opts domain.ValidateOptions) error {
	problems := domain.Validate(def, opts)
	refs, err := d.resolve(ctx, def, problems)
	if err != nil {
		return err
	}
	return domain.Invalid(append(problems, refs...))
}

// resolve resolves def's task references, pinning each task's version. Tasks whose
// reference was already refused are skipped.
func (d *definitions) resolve(ctx context.Context, def *domain.Workflow, known []domain.Problem) ([]domain.Problem, error) {
	refused := map[string]bool{}
	for _, p := range known {
		if p.Kind == domain.ProblemTaskRef {
			refused[p.Field] = true
		}
	}
	skip := func(i int) bool { return refused[fmt.Sprintf("tasks[%d].taskRef", i)] }
	found, err := d.lookup(ctx, def.Tasks, skip)
	if err != nil {
		return nil, err
	}
	var problems []domain.Problem
	for i := range def.Tasks {
		t := &def.Tasks[i]
		if t.TaskRef == "" || skip(i) {
			continue
		}
		td, ok := found[refKeyOf(*t)]
		if !ok {
			problems = append(problems, domain.UnknownTask(i, *t))
			continue
		}
		problems = append(problems, domain.CheckTask(i, *t, td)...)
		domain.MarkSecretParams(t, td)
		v := td.Version
		t.TaskVersion = &v
	}
	return problems, nil
}

// catalogueRefs answers each task of a system type that names no catalogue task with the
// catalogue task of its type and that task's latest version, as v4 stored every task: v4's
// designer looks each node's task up by its taskRef. Nothing is stored. When the catalogue
// does not answer, the versions are left out; the references are answered all the same.
func (d *definitions) catalogueRefs(ctx context.Context, w *domain.Workflow) {
	implied := map[int]bool{}
	w.Tasks = slices.Clone(w.Tasks) // the read's tasks may be shared
	for i := range w.Tasks {
		t := &w.Tasks[i]
		if name := tasktype.CatalogueTask(t.Type); t.TaskRef == "" && name != "" {
			t.TaskRef, implied[i] = name, true
		}
	}
	if len(implied) == 0 || d.tasks == nil {
		return
	}
	found, err := d.lookup(ctx, w.Tasks, func(i int) bool { return !implied[i] })
	if err != nil {
		return
	}
	for i := range implied {
		t := &w.Tasks[i]
		if td, ok := found[refKeyOf(*t)]; ok && t.TaskVersion == nil {
			v := td.Version
			t.TaskVersion = &v
		}
	}
}

// refKey is a task reference at a version, 0 for the latest.
type refKey struct {
	ref     string
	version int
}

func refKeyOf(t domain.Task) refKey {
	k := refKey{ref: t.TaskRef}
	if t.TaskVersion != nil {
		k.version = *t.TaskVersion
	}
	return k
}

// lookup asks the tasks service about each distinct reference of tasks once, concurrently,
// skipping tasks skip names. References the catalogue does not have are left out of the
// answer; an unreachable tasks service fails the lookup with 503.
func (d *definitions) lookup(ctx context.Context, tasks []domain.Task, skip func(i int) bool) (map[refKey]domain.TaskDefinition, error) {
	var keys []refKey
	seen := map[refKey]bool{}
	for i, t := range tasks {
		k := refKeyOf(t)
		if t.TaskRef == "" || seen[k] || (skip != nil && skip(i)) {
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	defs := make([]*domain.TaskDefinition, len(keys))
	err := forEach(ctx, len(keys), func(ctx context.Context, i int) error {
		td, err := d.tasks.ResolveTask(ctx, keys[i].ref, keys[i].version)
		switch {
		case apperr.HasReason(err, apperr.TaskNotFound):
			return nil
		case err != nil:
			return err
		}
		defs[i] = &td
		return nil
	})
	if err != nil {
		if apperr.KindOf(err) == apperr.KindInternal {
			return nil, apperr.Wrap(apperr.DependencyUnavailable, err, "The task catalogue could not be asked about task references.")
		}
		return nil, err
	}
	out := make(map[refKey]domain.TaskDefinition, len(keys))
	for i, k := range keys {
		if defs[i] != nil {
			out[k] = *defs[i]
		}
	}
	return out, nil
}

// forEach runs fn for 0..n-1 with bounded concurrency and returns the first error.
func forEach(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sem := make(chan struct{}, fetchConcurrency)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(ctx, i); err != nil {
				once.Do(func() { first = err })
				cancel(err)
			}
		})
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

// authorName is how a changelog names the principal who saved.
func authorName(p auth.Principal) string {
	for _, s := range []string{p.Name, p.Email, p.ID} {
		if s != "" {
			return s
		}
	}
	return p.Type
}

// changelogReason reads the reason a body gives for its change.
func changelogReason(w domain.Workflow) string {
	if w.Changelog != nil {
		return w.Changelog.Reason
	}
	return ""
}
