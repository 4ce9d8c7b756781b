// Package app holds the tasks service's use cases. It depends on the interfaces it
// declares here, implemented by the storage adapter and the workflows client.
package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// TaskStore keeps tasks and their versions.
type TaskStore interface {
	// CreateTask stores t as version 1 of a new task; a taken name fails with
	// domain.ErrTaskAlreadyExists.
	CreateTask(ctx context.Context, t domain.Task) error
	// FindTask returns the latest version; domain.ErrTaskNotFound when there is none.
	FindTask(ctx context.Context, ref domain.Ref) (domain.Task, error)
	// FindTaskVersion returns one version; domain.ErrTaskNotFound when there is none.
	FindTaskVersion(ctx context.Context, ref domain.Ref, version int) (domain.Task, error)
	// FindHistory returns the changelog of every version, oldest first.
	FindHistory(ctx context.Context, ref domain.Ref) ([]domain.VersionChange, error)
	// UpdateTask loads the latest version, lets fn decide the version to write and writes
	// it if nobody changed the task since: a version one above the latest adds a version,
	// the latest's number replaces it in place.
	UpdateTask(ctx context.Context, ref domain.Ref, fn func(latest domain.Task) (domain.Task, error)) (domain.Task, error)
	// DeleteTask removes the task and every version of it.
	DeleteTask(ctx context.Context, ref domain.Ref) error
	// FindTasks returns one page of the latest versions of the tasks matching f, and how
	// many match in all.
	FindTasks(ctx context.Context, f domain.Filter, p page.Request) ([]domain.Task, int64, error)
	// DeleteTeamTasks removes every task of team created before the given time, and
	// returns how many.
	DeleteTeamTasks(ctx context.Context, team string, before time.Time) (int, error)
}

// UsageChecker tells which workflows use a team task, so one in use is not deleted.
type UsageChecker interface {
	// WorkflowsUsing returns the names of the workflows whose latest version references
	// the task; none means it may go.
	WorkflowsUsing(ctx context.Context, ref domain.Ref) ([]string, error)
}

// Tasks is the task use cases. Every method authorizes the principal of its context.
type Tasks struct {
	store TaskStore
	usage UsageChecker
	now   func() time.Time
}

// NewTasks returns the task use cases.
func NewTasks(store TaskStore, usage UsageChecker) *Tasks {
	return &Tasks{store: store, usage: usage, now: time.Now}
}

func (s *Tasks) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// callerPrincipal returns the principal the request acts for: 401 without one.
func callerPrincipal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous || p.Type == "" {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return p, nil
}

// authorize checks the caller may do action on tasks of ref's scope. The global catalogue
// is every authenticated caller's to read; writing it is instance-wide task/write (admins,
// operators, global tokens granted it, Baton's services).
func authorize(ctx context.Context, ref domain.Ref, action string) (auth.Principal, error) {
	if ref.Scope == domain.ScopeTeam {
		return auth.Require(ctx, auth.TeamScope(ref.Team), "task", action)
	}
	if action == "read" {
		return callerPrincipal(ctx)
	}
	return auth.Require(ctx, auth.Scope{}, "task", action)
}

// author names the principal in changelogs.
func author(p auth.Principal) string {
	for _, s := range []string{p.Name, p.Email, p.ID} {
		if s != "" {
			return s
		}
	}
	return p.Type
}

// mayVerify reports whether p may mark tasks verified: a verified task is one Baton ships
// or an admin vouched for, so a version written by anyone else is not verified.
func mayVerify(p auth.Principal) bool { return p.IsAdmin() || p.Type == auth.TypeService }

// prepare checks a body against the path's name and the task rules, and fills defaults.
func prepare(ref domain.Ref, in domain.Task) (domain.Task, error) {
	if err := domain.ValidateName(ref.Name); err != nil {
		return domain.Task{}, err
	}
	if in.Name != "" && in.Name != ref.Name {
		return domain.Task{}, apperr.Invalid(apperr.TaskInvalidName,
			fmt.Sprintf("The body names task '%s' but the path names '%s'; task names cannot change.", in.Name, ref.Name),
			apperr.FieldError{Field: "name", Message: "differs from the path"})
	}
	t := in.Clone()
	t.Name, t.Scope, t.Team = ref.Name, ref.Scope, ref.Team
	t.Normalize()
	if errs := t.Validate(); len(errs) > 0 {
		return domain.Task{}, domain.Invalid(errs)
	}
	return t, nil
}

// Create stores a new task at version 1. A taken name answers TASK_ALREADY_EXISTS.
func (s *Tasks) Create(ctx context.Context, ref domain.Ref, in domain.Task) (domain.Task, error) {
	p, err := authorize(ctx, ref, "write")
	if err != nil {
		return domain.Task{}, err
	}
	if in.Name == "" {
		return domain.Task{}, apperr.Invalid(apperr.TaskInvalidName, "A task name is required.",
			apperr.FieldError{Field: "name", Message: "required"})
	}
	ref.Name = in.Name
	t, err := prepare(ref, in)
	if err != nil {
		return domain.Task{}, err
	}
	t.KeepSecrets(nil) // a new task has no stored value for the mask to stand for
	return masked(s.create(ctx, p, t))
}

// masked hides the password parameters' values of a task answered to a client.
func masked(t domain.Task, err error) (domain.Task, error) {
	if err != nil {
		return domain.Task{}, err
	}
	t.MaskSecrets()
	return t, nil
}

func (s *Tasks) create(ctx context.Context, p auth.Principal, t domain.Task) (domain.Task, error) {
	t = s.first(p, t)
	if err := s.store.CreateTask(ctx, t); err != nil {
		return domain.Task{}, err
	}
	return t, nil
}

// first is t as version 1 of a new task written by p.
func (s *Tasks) first(p auth.Principal, t domain.Task) domain.Task {
	now := s.stamp()
	t.Version, t.CreationDate = 1, now
	t.Verified = t.Verified && mayVerify(p)
	t.Changelog = domain.Changelog{Author: author(p), Reason: t.Changelog.Reason, Date: now}
	return t
}

// maxSaveAttempts bounds how often Save switches between creating and updating when
// others create or delete the same task meanwhile.
const maxSaveAttempts = 3

// SaveMode is how Save writes: Replace overwrites the latest version in place instead of
// adding one; DryRun answers what would be saved, validated, saving nothing.
type SaveMode struct {
	Replace bool
	DryRun  bool
}

// Save writes a task through PUT: a new version of an existing task (or, with Replace,
// the latest version overwritten in place), or version 1 of a new one, reported by
// created. A task the latest version holds already (the same canonical form: see
// sameTask) writes nothing and answers that version, so applying a file again makes no
// version. With DryRun nothing is written and the answer is what would be.
func (s *Tasks) Save(ctx context.Context, ref domain.Ref, in domain.Task, mode SaveMode) (t domain.Task, created bool, err error) {
	p, err := authorize(ctx, ref, "write")
	if err != nil {
		return domain.Task{}, false, err
	}
	next, err := prepare(ref, in)
	if err != nil {
		return domain.Task{}, false, err
	}
	for range maxSaveAttempts {
		t, err = s.store.UpdateTask(ctx, ref, func(cur domain.Task) (domain.Task, error) {
			now := s.stamp()
			w := next.Clone()
			w.CreationDate = cur.CreationDate
			w.Verified = w.Verified && mayVerify(p)
			w.Changelog = domain.Changelog{Author: author(p), Reason: next.Changelog.Reason, Date: now}
			w.Version = cur.Version + 1
			if mode.Replace {
				w.Version = cur.Version
			}
			// Password values sent as the mask or left out are the latest version's.
			w.KeepSecrets(cur.Spec.Params)
			same, err := sameTask(cur, w)
			switch {
			case err != nil:
				return domain.Task{}, err
			case same:
				return domain.Task{}, notWritten{cur}
			case mode.DryRun:
				return domain.Task{}, notWritten{w}
			}
			return w, nil
		})
		var nw notWritten
		if errors.As(err, &nw) {
			t, err = nw.task, nil
		}
		if !errors.Is(err, domain.ErrTaskNotFound) {
			t, err = masked(t, err)
			return t, false, err
		}
		first := next.Clone()
		first.KeepSecrets(nil)
		if mode.DryRun {
			t, err = masked(s.first(p, first), nil)
			return t, true, err
		}
		t, err = masked(s.create(ctx, p, first))
		if !errors.Is(err, domain.ErrTaskAlreadyExists) {
			return t, err == nil, err
		}
	}
	return domain.Task{}, false, apperr.New(apperr.ConcurrentModification,
		"Task '%s' is being created and deleted by others; try again.", ref.Name)
}

// Task returns a version of a task, the latest when version is 0.
func (s *Tasks) Task(ctx context.Context, ref domain.Ref, version int) (domain.Task, error) {
	if _, err := authorize(ctx, ref, "read"); err != nil {
		return domain.Task{}, err
	}
	return masked(s.find(ctx, ref, version))
}

func (s *Tasks) find(ctx context.Context, ref domain.Ref, version int) (domain.Task, error) {
	if version < 0 {
		return domain.Task{}, domain.TaskNotFound(ref, version)
	}
	if version == 0 {
		return s.store.FindTask(ctx, ref)
	}
	return s.store.FindTaskVersion(ctx, ref, version)
}

// Changelog returns the changelog of every version of a task, oldest first.
func (s *Tasks) Changelog(ctx context.Context, ref domain.Ref) ([]domain.VersionChange, error) {
	if _, err := authorize(ctx, ref, "read"); err != nil {
		return nil, err
	}
	return s.store.FindHistory(ctx, ref)
}

// Delete removes a team task and all its versions, unless the latest version of a
// workflow uses it (TASK_IN_USE, naming them). A workflow saved between the check and
// the removal can still reference it; the workflows service validates references to
// active task versions when it saves, so such a workflow fails there.
func (s *Tasks) Delete(ctx context.Context, ref domain.Ref) error {
	if ref.Scope != domain.ScopeTeam {
		return apperr.New(apperr.MethodNotAllowed, "Global tasks cannot be deleted; set their status to inactive.")
	}
	if _, err := authorize(ctx, ref, "delete"); err != nil {
		return err
	}
	if _, err := s.store.FindTask(ctx, ref); err != nil {
		return err
	}
	users, err := s.usage.WorkflowsUsing(ctx, ref)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return domain.TaskInUse(ref, users)
	}
	return s.store.DeleteTask(ctx, ref)
}

// QueryTeam searches the tasks of team.
func (s *Tasks) QueryTeam(ctx context.Context, team string, f domain.Filter, pr page.Request) (page.Page[domain.Task], error) {
	if _, err := auth.Require(ctx, auth.TeamScope(team), "task", "read"); err != nil {
		return page.Page[domain.Task]{}, err
	}
	f.Scope, f.Teams = domain.ScopeTeam, []string{team}
	return s.query(ctx, f, pr)
}

// QueryGlobal searches the global catalogue or, when teams are given, those teams'
// tasks: every one of them must be the caller's to read (a non-admin's own teams).
func (s *Tasks) QueryGlobal(ctx context.Context, teams []string, f domain.Filter, pr page.Request) (page.Page[domain.Task], error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return page.Page[domain.Task]{}, err
	}
	f.Scope = domain.ScopeGlobal
	if len(teams) > 0 {
		for _, team := range teams {
			if !p.Can(auth.TeamScope(team), "task", "read") {
				return page.Page[domain.Task]{}, apperr.New(apperr.PermissionDenied, "Not allowed to read task in team '%s'.", team)
			}
		}
		f.Scope, f.Teams = domain.ScopeTeam, slices.Compact(slices.Sorted(slices.Values(teams)))
	}
	return s.query(ctx, f, pr)
}

func (s *Tasks) query(ctx context.Context, f domain.Filter, pr page.Request) (page.Page[domain.Task], error) {
	tasks, total, err := s.store.FindTasks(ctx, f, pr)
	if err != nil {
		return page.Page[domain.Task]{}, err
	}
	for i := range tasks {
		tasks[i].MaskSecrets()
	}
	return page.New(tasks, pr, total), nil
}

// ParseRef reads a reference as workflows write it: `<name>` for a global task,
// `<team>/<name>` for a team's.
func ParseRef(s string) (domain.Ref, error) {
	if s == "" {
		return domain.Ref{}, apperr.Invalid(apperr.RequestInvalid, "A task reference (ref) is required.",
			apperr.FieldError{Field: "ref", Message: "required"})
	}
	team, name, ok := strings.Cut(s, "/")
	if !ok {
		team, name = "", s
	}
	if (ok && team == "") || strings.Contains(name, "/") {
		return domain.Ref{}, apperr.Invalid(apperr.RequestInvalid,
			fmt.Sprintf("'%s' is not a task reference: use <name> or <team>/<name>.", s),
			apperr.FieldError{Field: "ref", Message: "use <name> or <team>/<name>"})
	}
	if err := domain.ValidateName(name); err != nil {
		return domain.Ref{}, err
	}
	if ok {
		return domain.TeamRef(team, name), nil
	}
	return domain.GlobalRef(name), nil
}

// Resolve returns a version of the task ref names (the latest when version is 0), for
// Baton's services: the workflows service pins references with it, and the runs service
// reads the spec a run executes. Password parameters are answered unmasked: a run needs
// their real defaults (the runs service seals them in its own store).
func (s *Tasks) Resolve(ctx context.Context, ref domain.Ref, version int) (domain.Task, error) {
	// 401 without a principal, 403 for any but Baton's own services.
	if _, err := callerPrincipal(ctx); err != nil {
		return domain.Task{}, err
	}
	if _, err := auth.RequireService(ctx); err != nil {
		return domain.Task{}, err
	}
	return s.find(ctx, ref, version)
}

// TeamDeleted removes the tasks of a team that identity deleted at deletedAt. Tasks
// created later belong to a team created again under the same name, so a late or repeated
// delivery of the event leaves them alone.
func (s *Tasks) TeamDeleted(ctx context.Context, team string, deletedAt time.Time) (int, error) {
	if team == "" {
		return 0, nil
	}
	if deletedAt.IsZero() {
		deletedAt = s.now()
	}
	return s.store.DeleteTeamTasks(ctx, team, deletedAt)
}
