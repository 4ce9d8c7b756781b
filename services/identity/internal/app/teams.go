// Package app holds identity's use cases. It depends on the interfaces it declares here,
// implemented by the storage and messaging adapters.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TeamStore keeps teams. Writes that owe events store them with the change, in one
// single-document write.
type TeamStore interface {
	// CreateTeam stores a new team; a taken name fails with domain.ErrTeamNameTaken.
	CreateTeam(ctx context.Context, t domain.Team, owed []outbox.Entry) error
	// FindTeamByName fails with domain.ErrTeamNotFound.
	FindTeamByName(ctx context.Context, name string) (domain.Team, error)
	// UpdateTeam loads the team, applies fn and writes it back if nobody changed it since.
	UpdateTeam(ctx context.Context, name string, fn func(*domain.Team) error) (domain.Team, error)
	// DeleteTeam removes the team, storing the events owed computes for it with the removal.
	DeleteTeam(ctx context.Context, name string, owed func(domain.Team) ([]outbox.Entry, error)) error
	FindTeams(ctx context.Context, f domain.TeamFilter, p page.Request) ([]domain.Team, int64, error)
	// FindTeamsByMember returns every live team the user belongs to.
	FindTeamsByMember(ctx context.Context, userID string) ([]domain.Team, error)
	// TeamNameTaken reports whether a live team holds name.
	TeamNameTaken(ctx context.Context, name string) (bool, error)
}

// Relay is told when events were stored, so they leave at once rather than at its next sweep.
type Relay interface{ Nudge() }

// TeamSecrets seals the values of password parameters before they are stored, and opens
// them for Baton's own use (resolving parameters for runs). It is the seam for encryption at
// rest: *secrets.Box (libs/secrets, AES-GCM) satisfies it and is wired by setting
// Teams.Secrets; PlainTeamSecrets, the default, stores values as given.
type TeamSecrets interface {
	Seal(plain string) (string, error)
	Open(sealed string) (string, error)
}

// PlainTeamSecrets keeps secret values unencrypted.
type PlainTeamSecrets struct{}

// Seal returns plain unchanged.
func (PlainTeamSecrets) Seal(plain string) (string, error) { return plain, nil }

// Open returns sealed unchanged.
func (PlainTeamSecrets) Open(sealed string) (string, error) { return sealed, nil }

// Teams is the team use cases. Every method authorizes the principal of its context.
type Teams struct {
	store  TeamStore
	dir    userDirectory
	relay  Relay
	newID  func() string
	now    func() time.Time
	source string
	// Secrets seals password parameter values; set it before serving.
	Secrets TeamSecrets
	// WorkflowCount asks the workflows service, which owns the count, how many workflows a
	// team has; nil leaves the usage at 0. Reads of a team and searches ask (a search for
	// each team it answers, a few at a time).
	WorkflowCount func(ctx context.Context, team string) (int, error)
	// RunUsage asks the runs service, which owns the run counters, what a team uses of its
	// run quotas: the Current*Run* fields and MonthlyResetDate of the answer count; nil
	// leaves them at 0. Reads of a team ask.
	RunUsage func(ctx context.Context, team string) (domain.TeamQuotaUsage, error)
	// RunCounters asks the same of the run counters alone (CurrentRuns,
	// CurrentConcurrentRuns, MonthlyResetDate), which cost the runs service two lookups
	// rather than a pass over the month's runs: searches ask it for each team; nil lets
	// them ask RunUsage.
	RunCounters func(ctx context.Context, team string) (domain.TeamQuotaUsage, error)
	// QuotaDefaults returns the instance's default quotas (the settings' values); nil means
	// domain.DefaultTeamQuotas. Set it before serving.
	QuotaDefaults func(ctx context.Context) (domain.TeamQuotas, error)
	// Runs asks the runs service about a team's runs that are not completed before the
	// team is deleted; nil, without a runs service, deletes at once.
	Runs TeamRuns
}

// TeamRuns counts and cancels a team's runs that are not completed.
type TeamRuns interface {
	ActiveRuns(ctx context.Context, team string) (int, error)
	CancelRuns(ctx context.Context, team string) error
}

// NewTeams returns the team use cases. newID makes record ids.
func NewTeams(store TeamStore, users UserStore, relay Relay, newID func() string) *Teams {
	return &Teams{
		store: store, dir: userDirectory{store: users, newID: newID, now: time.Now},
		relay: relay, newID: newID, now: time.Now, source: "/baton/identity", Secrets: PlainTeamSecrets{},
	}
}

// MemberRef names a user by id or, without one, by email.
type MemberRef struct {
	ID    string
	Email string
}

// MemberInput adds a user to a team, or changes their role.
type MemberInput struct {
	MemberRef
	Role string
}

// ApproverGroupInput creates or updates the approver group called Name. Approvers nil keeps
// an existing group's approvers.
type ApproverGroupInput struct {
	Name      string
	Approvers []MemberRef
}

// TeamInput is a request to create or change a team; nil and empty fields change nothing.
type TeamInput struct {
	DisplayName    *string
	Status         *domain.TeamStatus
	Labels         map[string]*string
	ExternalRef    *string
	Members        []MemberInput
	ApproverGroups []ApproverGroupInput
	Parameters     []domain.TeamParam
	Quotas         *domain.TeamQuotaOverrides
}

// TeamDetails is a team with what showing it needs. Secret parameter values are masked.
type TeamDetails struct {
	Team domain.Team
	// Users are the records of the team's members, by id.
	Users map[string]domain.User
	// Quotas are the limits in force: the team's overrides over the defaults.
	Quotas domain.TeamQuotas
	Usage  domain.TeamQuotaUsage
	// UsageUnknown says the services owning the counters did not answer a search for the
	// team's usage: it is answered with its limits alone. CountersOnly says a search read
	// its counters without the month's run durations, which it leaves out.
	UsageUnknown, CountersOnly bool
}

func (s *Teams) stamp() time.Time { return s.now().UTC().Truncate(time.Millisecond) }

// DefaultQuotas returns the quotas of a team that overrides none.
func (s *Teams) DefaultQuotas(ctx context.Context) (domain.TeamQuotas, error) {
	if _, err := callerPrincipal(ctx); err != nil {
		return domain.TeamQuotas{}, err
	}
	return s.defaults(ctx)
}

func (s *Teams) defaults(ctx context.Context) (domain.TeamQuotas, error) {
	if s.QuotaDefaults == nil {
		return domain.DefaultTeamQuotas, nil
	}
	return s.QuotaDefaults(ctx)
}

// canCreateTeam: any person (who becomes the owner), and principals that may write teams
// instance-wide: admins, operators, global tokens with team/write, Baton's services.
func canCreateTeam(p auth.Principal) bool {
	if isUserKind(p) {
		return userTokenAllows(p, "team", "write")
	}
	return p.Can(auth.Scope{}, "team", "write")
}

// CreateTeam creates a team named after name (slugged) and announces it. A person creating
// it becomes its owner.
func (s *Teams) CreateTeam(ctx context.Context, name string, in TeamInput) (TeamDetails, error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return TeamDetails{}, err
	}
	if !canCreateTeam(p) {
		return TeamDetails{}, apperr.New(apperr.PermissionDenied, "Not allowed to create teams.")
	}
	defaults, err := s.defaults(ctx)
	if err != nil {
		return TeamDetails{}, err
	}
	// Admin-only fields are checked before anything is written, pending users included.
	if !adminOrService(p) {
		if in.Status != nil && *in.Status != domain.TeamActive {
			return TeamDetails{}, errOnlyAdmins("a team's status")
		}
		if in.Quotas != nil {
			if in.Quotas.Over(defaults) != defaults {
				return TeamDetails{}, errOnlyAdmins("a team's quotas")
			}
			in.Quotas = nil // the defaults restated: nothing to pin
		}
	}
	// A team created by a token has no owner until an admin names one: tokens never name
	// members, as they never change them.
	if (len(in.Members) > 0 || len(in.ApproverGroups) > 0) && !mayNameMembers(p) {
		return TeamDetails{}, apperr.New(apperr.PermissionDenied,
			"Only a person, who becomes the new team's owner, or an admin can name its members and approver groups.")
	}
	// Checked before pending users are created for a team that cannot exist.
	if _, err := s.ValidateName(ctx, name); err != nil {
		return TeamDetails{}, err
	}
	var creator *domain.User
	if isUserKind(p) {
		u, err := s.dir.callerUser(ctx, p, true)
		if err != nil {
			return TeamDetails{}, err
		}
		creator = &u
	}
	ch, err := s.changes(ctx, in, true)
	if err != nil {
		return TeamDetails{}, err
	}
	if creator != nil {
		ch.Members = append(ch.Members, domain.MemberChange{UserID: creator.ID, Role: domain.TeamRoleOwner})
	}
	t, err := domain.NewTeam(s.newID(), name, ch, s.stamp())
	if err != nil {
		return TeamDetails{}, err
	}
	e, err := events.New("team-created-"+t.ID, s.source, events.TypeTeamCreated, "/team/"+t.Name,
		events.TeamCreated{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate})
	if err != nil {
		return TeamDetails{}, err
	}
	entry, err := outbox.NewEntry(events.TeamEvents, t.Name, e)
	if err != nil {
		return TeamDetails{}, err
	}
	if err := s.store.CreateTeam(ctx, t, []outbox.Entry{entry}); err != nil {
		return TeamDetails{}, err
	}
	s.relay.Nudge()
	// A team just made has no workflows or runs yet: nothing to ask.
	out, err := s.detailsOf(ctx, []domain.Team{t})
	if err != nil {
		return TeamDetails{}, err
	}
	return out[0], nil
}

// Team returns the team called name, for principals that may read it.
func (s *Teams) Team(ctx context.Context, name string) (TeamDetails, error) {
	t, err := s.store.FindTeamByName(ctx, name)
	if err != nil {
		return TeamDetails{}, err
	}
	if _, err := requireInTeam(ctx, t, "team", "read"); err != nil {
		return TeamDetails{}, err
	}
	return s.details(ctx, t)
}

// Announced returns the team called name as its team.created event announces it, for a
// service that keeps a record of teams and is asked about one whose event has not reached
// it yet. It is an internal read: the caller is one of Baton's services.
func (s *Teams) Announced(ctx context.Context, name string) (events.TeamCreated, error) {
	t, err := s.store.FindTeamByName(ctx, name)
	if err != nil {
		return events.TeamCreated{}, err
	}
	return events.TeamCreated{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate}, nil
}

// WorkflowContext is what the workflows service needs of a team: the names of its
// parameters, which `$(team.params.<name>)` references resolve, and its limit of workflows
// in force.
type WorkflowContext struct {
	Team             string
	ParamNames       []string
	MaxWorkflowCount int
}

// WorkflowContext returns the workflow context of the team called name; an unknown team
// answers 404 TEAM_NOT_FOUND. Only Baton's services may ask: the workflows service has
// checked its own caller's rights on the team's workflows.
func (s *Teams) WorkflowContext(ctx context.Context, name string) (WorkflowContext, error) {
	if _, err := auth.RequireService(ctx); err != nil {
		return WorkflowContext{}, err
	}
	t, err := s.store.FindTeamByName(ctx, name)
	if err != nil {
		return WorkflowContext{}, err
	}
	quotas, err := s.quotas(ctx, t)
	if err != nil {
		return WorkflowContext{}, err
	}
	names := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		names[i] = p.Name
	}
	return WorkflowContext{Team: t.Name, ParamNames: names, MaxWorkflowCount: quotas.MaxWorkflowCount}, nil
}

// UpdateTeam applies a change to the team called name: team/write in it, plus owner or
// admin for members and approver groups, admin for status and quotas (a field sent back
// unchanged is no change). A body name other than the path's is refused: names never change.
func (s *Teams) UpdateTeam(ctx context.Context, name, bodyName string, in TeamInput) (TeamDetails, error) {
	if bodyName != "" && domain.Slug(bodyName) != name {
		return TeamDetails{}, apperr.Invalid(apperr.TeamInvalidReq,
			fmt.Sprintf("The body names team '%s' but the path names '%s'; team names cannot change.", bodyName, name),
			apperr.FieldError{Field: "name", Message: "differs from the path"})
	}
	current, err := s.store.FindTeamByName(ctx, name)
	if err != nil {
		return TeamDetails{}, err
	}
	p, err := requireInTeam(ctx, current, "team", "write")
	if err != nil {
		return TeamDetails{}, err
	}
	defaults, err := s.defaults(ctx)
	if err != nil {
		return TeamDetails{}, err
	}
	// Refuse what is bound to be refused before pending users are created for it.
	if err := checkAdminFields(p, current, in, defaults); err != nil {
		return TeamDetails{}, err
	}
	ch, err := s.changes(ctx, in, canManageMembers(p, current))
	if err != nil {
		return TeamDetails{}, err
	}
	t, err := s.store.UpdateTeam(ctx, name, func(t *domain.Team) error {
		p, err := requireInTeam(ctx, *t, "team", "write")
		if err != nil {
			return err
		}
		before := t.Clone()
		if err := t.Apply(ch); err != nil {
			return err
		}
		return enforceFieldRules(p, before, t, defaults)
	})
	if err != nil {
		return TeamDetails{}, err
	}
	return s.details(ctx, t)
}

// checkAdminFields refuses, for non-admins, a status or quotas that differ from the team's.
func checkAdminFields(p auth.Principal, t domain.Team, in TeamInput, defaults domain.TeamQuotas) error {
	if adminOrService(p) {
		return nil
	}
	if in.Status != nil && *in.Status != t.Status {
		return errOnlyAdmins("a team's status")
	}
	if in.Quotas != nil && t.QuotaOverrides.Merge(*in.Quotas).Over(defaults) != t.QuotaOverrides.Over(defaults) {
		return errOnlyAdmins("a team's quotas")
	}
	return nil
}

// enforceFieldRules checks a change of t against the field-level rules, on the version
// being written. Quotas a non-admin restated unchanged are not pinned as overrides.
func enforceFieldRules(p auth.Principal, before domain.Team, after *domain.Team, defaults domain.TeamQuotas) error {
	if !domain.SameMembership(before, *after) && !canManageMembers(p, before) {
		return errOnlyOwners(before.Name)
	}
	if adminOrService(p) {
		return nil
	}
	if after.Status != before.Status {
		return errOnlyAdmins("a team's status")
	}
	if after.QuotaOverrides.Over(defaults) != before.QuotaOverrides.Over(defaults) {
		return errOnlyAdmins("a team's quotas")
	}
	after.QuotaOverrides = before.QuotaOverrides
	return nil
}

// DeleteTeam removes the team called name and announces it, so every service removes what
// belongs to it. It needs team/delete in the team. It refuses while the team has runs that
// are not completed, unless force cancels them first.
func (s *Teams) DeleteTeam(ctx context.Context, name string, force bool) error {
	if s.Runs != nil {
		t, err := s.store.FindTeamByName(ctx, name)
		if err != nil {
			return err
		}
		if _, err := requireInTeam(ctx, t, "team", "delete"); err != nil {
			return err
		}
		active, err := s.Runs.ActiveRuns(ctx, t.Name)
		if err != nil {
			return err
		}
		if active > 0 {
			if !force {
				return apperr.New(apperr.TeamHasActiveRuns,
					"Team '%s' has %d runs that are not completed; cancel them or delete with force=true.", t.Name, active)
			}
			if err := s.Runs.CancelRuns(ctx, t.Name); err != nil {
				return err
			}
		}
	}
	err := s.store.DeleteTeam(ctx, name, func(t domain.Team) ([]outbox.Entry, error) {
		if _, err := requireInTeam(ctx, t, "team", "delete"); err != nil {
			return nil, err
		}
		e, err := events.New("team-deleted-"+t.ID, s.source, events.TypeTeamDeleted, "/team/"+t.Name,
			events.TeamDeleted{ID: t.ID, Name: t.Name})
		if err != nil {
			return nil, err
		}
		entry, err := outbox.NewEntry(events.TeamEvents, t.Name, e)
		if err != nil {
			return nil, err
		}
		return []outbox.Entry{entry}, nil
	})
	if err != nil {
		return err
	}
	s.relay.Nudge()
	return nil
}

// FindTeams searches the teams the caller may see: all of them for admins, operators and
// principals with team/read instance-wide; a person's own teams (by stored membership); a
// team token's team.
func (s *Teams) FindTeams(ctx context.Context, f domain.TeamFilter, pr page.Request) (page.Page[TeamDetails], error) {
	p, err := callerPrincipal(ctx)
	if err != nil {
		return page.Page[TeamDetails]{}, err
	}
	none := page.New([]TeamDetails(nil), pr, 0)
	switch {
	case p.Can(auth.Scope{}, "team", "read"):
	case isUserKind(p):
		if p.ID == "" || !userTokenAllows(p, "team", "read") {
			return none, nil
		}
		f.MemberID = p.ID
	case p.Team != "" && p.Workflow == "" && p.Can(auth.TeamScope(p.Team), "team", "read"):
		if f.Names != nil && !slices.Contains(f.Names, p.Team) {
			return none, nil
		}
		f.Names = []string{p.Team}
	default:
		return none, nil
	}
	teams, total, err := s.store.FindTeams(ctx, f, pr)
	if err != nil {
		return page.Page[TeamDetails]{}, err
	}
	details, err := s.detailsOf(ctx, teams)
	if err != nil {
		return page.Page[TeamDetails]{}, err
	}
	if err := s.usages(ctx, details); err != nil {
		return page.Page[TeamDetails]{}, err
	}
	return page.New(details, pr, total), nil
}

// ValidateName checks that name slugs to a valid, free team name and returns the slug.
func (s *Teams) ValidateName(ctx context.Context, name string) (string, error) {
	slug, err := domain.TeamName(name)
	if err != nil {
		return "", err
	}
	taken, err := s.store.TeamNameTaken(ctx, slug)
	if err != nil {
		return "", err
	}
	if taken {
		return "", domain.TeamNameTaken(slug)
	}
	return slug, nil
}

// changes resolves a request into domain changes: member references become user ids and
// secret values are sealed. With invite, unknown emails become pending users; without it
// (callers who may not change members) they are refused, since adding them would be a
// membership change.
func (s *Teams) changes(ctx context.Context, in TeamInput, invite bool) (domain.TeamChanges, error) {
	ch := domain.TeamChanges{
		DisplayName: in.DisplayName, Status: in.Status, Labels: in.Labels, ExternalRef: in.ExternalRef,
		Quotas: in.Quotas,
	}
	// Roles are checked before anything is looked up or created.
	for i, m := range in.Members {
		if !domain.ValidTeamRole(m.Role) {
			return domain.TeamChanges{}, domain.InvalidTeamRole(fmt.Sprintf("members[%d].role", i), m.Role)
		}
	}
	for i, m := range in.Members {
		field := fmt.Sprintf("members[%d]", i)
		u, err := s.resolveRef(ctx, m.MemberRef, field)
		if errors.Is(err, domain.ErrUserNotFound) && m.ID == "" {
			if !invite {
				return domain.TeamChanges{}, apperr.New(apperr.PermissionDenied,
					"Only a team owner or an admin can add members; '%s' is not one.", m.Email)
			}
			if u, err = s.dir.register(ctx, m.Email, "", domain.UserPending); err == nil && u.Status == domain.UserDeleted {
				err = errDeletedUser(field, m.MemberRef) // deleted by a concurrent request
			}
		}
		if err != nil {
			return domain.TeamChanges{}, asInvalidRef(err, field, m.MemberRef)
		}
		ch.Members = append(ch.Members, domain.MemberChange{UserID: u.ID, Role: m.Role})
	}
	for i, g := range in.ApproverGroups {
		gc := domain.ApproverGroupChange{ID: s.newID(), Name: g.Name}
		if g.Approvers != nil {
			gc.Approvers = []string{}
		}
		for j, ref := range g.Approvers {
			field := fmt.Sprintf("approverGroups[%d].approvers[%d]", i, j)
			u, err := s.resolveRef(ctx, ref, field)
			if errors.Is(err, domain.ErrUserNotFound) {
				return domain.TeamChanges{}, apperr.Invalid(apperr.TeamInvalidReq,
					fmt.Sprintf("Approvers of group '%s' must be members of the team; %s is not.", g.Name, refString(ref)),
					apperr.FieldError{Field: field, Message: "not a member of the team"})
			}
			if err != nil {
				return domain.TeamChanges{}, err
			}
			gc.Approvers = append(gc.Approvers, u.ID)
		}
		ch.ApproverGroups = append(ch.ApproverGroups, gc)
	}
	for _, prm := range in.Parameters {
		if prm.Secret() {
			var err error
			if prm.Value, err = s.seal(prm.Value); err != nil {
				return domain.TeamChanges{}, err
			}
			if prm.Default, err = s.seal(prm.Default); err != nil {
				return domain.TeamChanges{}, err
			}
		}
		ch.Parameters = append(ch.Parameters, prm)
	}
	return ch, nil
}

// seal seals a secret value the caller set, as the JSON text of a string holding the
// sealed form of the value's JSON; an absent or masked value is left for the domain to keep
// the stored one.
func (s *Teams) seal(v json.RawMessage) (json.RawMessage, error) {
	if domain.IsMaskedValue(v) {
		return v, nil
	}
	sealed, err := s.Secrets.Seal(string(v))
	if err != nil {
		return nil, fmt.Errorf("seal secret parameter: %w", err)
	}
	if sealed == string(v) {
		return v, nil // not encrypted: keep the value's own JSON
	}
	out, err := json.Marshal(sealed)
	if err != nil {
		return nil, fmt.Errorf("seal secret parameter: %w", err)
	}
	return out, nil
}

// open reverses seal, for Baton's own use: a value stored sealed becomes the value's JSON
// again; anything else (a value stored before a key was configured) is returned as stored.
func (s *Teams) open(v json.RawMessage) (json.RawMessage, error) {
	var sealed string
	if json.Unmarshal(v, &sealed) != nil || !secrets.IsSealed(sealed) {
		return v, nil
	}
	plain, err := s.Secrets.Open(sealed)
	if err != nil {
		return nil, fmt.Errorf("open secret parameter: %w", err)
	}
	if !json.Valid([]byte(plain)) {
		return nil, errors.New("open secret parameter: the opened value is not JSON")
	}
	return json.RawMessage(plain), nil
}

// openedParams returns t's parameters with their secrets opened. It checks no caller and
// its result must never reach an API response, a log line or an event.
func (s *Teams) openedParams(t domain.Team) ([]domain.TeamParam, error) {
	out := make([]domain.TeamParam, len(t.Parameters))
	for i, prm := range t.Parameters {
		if prm.Secret() {
			var err error
			if prm.Value, err = s.open(prm.Value); err != nil {
				return nil, fmt.Errorf("team %s parameter %s: %w", t.Name, prm.Name, err)
			}
			if prm.Default, err = s.open(prm.Default); err != nil {
				return nil, fmt.Errorf("team %s parameter %s: %w", t.Name, prm.Name, err)
			}
		}
		out[i] = prm
	}
	return out, nil
}

// quotas returns the limits in force for t: its overrides over the defaults.
func (s *Teams) quotas(ctx context.Context, t domain.Team) (domain.TeamQuotas, error) {
	defaults, err := s.defaults(ctx)
	if err != nil {
		return domain.TeamQuotas{}, err
	}
	return t.QuotaOverrides.Over(defaults), nil
}

// resolveRef finds the user a reference names; deleted users count as unknown.
func (s *Teams) resolveRef(ctx context.Context, ref MemberRef, field string) (domain.User, error) {
	var (
		u   domain.User
		err error
	)
	switch {
	case ref.ID != "":
		u, err = s.dir.store.FindUserByID(ctx, ref.ID)
	case ref.Email != "":
		if _, nerr := domain.NormalizeEmail(ref.Email); nerr != nil {
			return domain.User{}, apperr.Invalid(apperr.TeamInvalidReq,
				fmt.Sprintf("'%s' is not an email address.", ref.Email),
				apperr.FieldError{Field: field + ".email", Message: "not an email address"})
		}
		u, err = s.dir.store.FindUserByEmail(ctx, ref.Email)
	default:
		return domain.User{}, apperr.Invalid(apperr.TeamInvalidReq, "Each member needs an id or an email.",
			apperr.FieldError{Field: field, Message: "id or email required"})
	}
	if err != nil {
		return domain.User{}, err
	}
	if u.Status == domain.UserDeleted {
		return domain.User{}, errDeletedUser(field, ref)
	}
	return u, nil
}

func errDeletedUser(field string, ref MemberRef) error {
	return apperr.Invalid(apperr.TeamInvalidReq, fmt.Sprintf("User %s is deleted.", refString(ref)),
		apperr.FieldError{Field: field, Message: "deleted user"})
}

// asInvalidRef turns "no such user" for a member reference into a 400 on that field.
func asInvalidRef(err error, field string, ref MemberRef) error {
	if !errors.Is(err, domain.ErrUserNotFound) {
		return err
	}
	return apperr.Invalid(apperr.TeamInvalidReq, fmt.Sprintf("There is no user %s.", refString(ref)),
		apperr.FieldError{Field: field + ".id", Message: "no such user"})
}

func refString(ref MemberRef) string {
	if ref.ID != "" {
		return "with id '" + ref.ID + "'"
	}
	return "'" + ref.Email + "'"
}

// details completes one team for showing.
func (s *Teams) details(ctx context.Context, t domain.Team) (TeamDetails, error) {
	out, err := s.detailsOf(ctx, []domain.Team{t})
	if err != nil {
		return TeamDetails{}, err
	}
	if err := s.usage(ctx, &out[0], s.RunUsage); err != nil {
		return TeamDetails{}, err
	}
	return out[0], nil
}

// usageConcurrency bounds the teams whose usage one search asks about at a time.
const usageConcurrency = 8

// usages asks what each of teams uses, as details does for one: a search answers the same
// counts as reading each team. A team whose counters cannot be read is marked
// UsageUnknown rather than failing the whole search.
func (s *Teams) usages(ctx context.Context, teams []TeamDetails) error {
	var g errgroup.Group
	g.SetLimit(usageConcurrency)
	runs := s.RunUsage
	if s.RunCounters != nil {
		runs = s.RunCounters
	}
	for i := range teams {
		teams[i].CountersOnly = s.RunCounters != nil
		g.Go(func() error {
			if err := s.usage(ctx, &teams[i], runs); err != nil {
				teams[i].UsageUnknown = true
			}
			return nil
		})
	}
	_ = g.Wait()
	return ctx.Err()
}

// usage asks the services owning the counters what team d uses: workflows the workflow
// count, runs (through runs) the run counts.
func (s *Teams) usage(ctx context.Context, d *TeamDetails, runs func(ctx context.Context, team string) (domain.TeamQuotaUsage, error)) error {
	if s.WorkflowCount != nil {
		n, err := s.WorkflowCount(ctx, d.Team.Name)
		if err != nil {
			return err
		}
		d.Usage.CurrentWorkflowCount = n
	}
	if runs != nil {
		ru, err := runs(ctx, d.Team.Name)
		if err != nil {
			return err
		}
		u := &d.Usage
		u.CurrentRuns, u.CurrentConcurrentRuns = ru.CurrentRuns, ru.CurrentConcurrentRuns
		u.CurrentRunTotalDuration, u.CurrentRunMedianDuration = ru.CurrentRunTotalDuration, ru.CurrentRunMedianDuration
		if !ru.MonthlyResetDate.IsZero() {
			u.MonthlyResetDate = ru.MonthlyResetDate
		}
	}
	return nil
}

// detailsOf completes teams for showing, loading all their members in one query.
func (s *Teams) detailsOf(ctx context.Context, teams []domain.Team) ([]TeamDetails, error) {
	defaults, err := s.defaults(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range teams {
		for _, m := range t.Members {
			ids = append(ids, m.UserID)
		}
	}
	users, err := s.dir.usersByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	usage := domain.NewTeamQuotaUsage(s.now())
	out := make([]TeamDetails, len(teams))
	for i, t := range teams {
		params := make([]domain.TeamParam, len(t.Parameters))
		for j, prm := range t.Parameters {
			params[j] = prm.Masked()
		}
		t.Parameters = params
		out[i] = TeamDetails{Team: t, Users: users, Quotas: t.QuotaOverrides.Over(defaults), Usage: usage}
	}
	return out, nil
}
