package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// CodeHostStore keeps the code host's installations and the records of its deliveries.
type CodeHostStore interface {
	// FindInstallation fails with domain.ErrInstallationNotFound.
	FindInstallation(ctx context.Context, id int64) (domain.Installation, error)
	// FindInstallationsByTeam returns the installations linked to team, by id.
	FindInstallationsByTeam(ctx context.Context, team string) ([]domain.Installation, error)
	// UpdateInstallation loads the installation (a new one, with only its ID, when there
	// is none), applies fn and writes it back if nobody changed it since; an error of fn
	// is returned and nothing is written.
	UpdateInstallation(ctx context.Context, id int64, fn func(*domain.Installation) error) (domain.Installation, error)
	// UnlinkTeam removes every link to team.
	UnlinkTeam(ctx context.Context, team string) error
	// FindDelivery returns the record of delivery id, found false when there is none.
	FindDelivery(ctx context.Context, id string) (d domain.Delivery, found bool, err error)
	// CreateDelivery records a handled delivery, replacing a record older than
	// domain.DeliveryTTL; domain.ErrDeliveryExists when a newer one holds the id.
	CreateDelivery(ctx context.Context, d domain.Delivery) error
	// PurgeDeliveries deletes the records received before before.
	PurgeDeliveries(ctx context.Context, before time.Time) error
}

// Teams tells whether a team exists: nil, or an error of reason TEAM_NOT_FOUND; default:
// identity's internal API.
type Teams interface {
	Team(ctx context.Context, name string) error
}

// Integration is one entry of GET /integration: an integration and its state in a team.
type Integration struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Icon         string `json:"icon,omitempty"`
	Status       string `json:"status"`
	Ref          string `json:"ref,omitempty"`
	Instructions string `json:"instructions,omitempty"`
	Link         string `json:"link,omitempty"`
}

// Integration statuses.
const (
	StatusLinked   = "linked"
	StatusUnlinked = "unlinked"
)

// ChatIntegration answers the chat platform's entry of GET /integration for team; mayLink
// says the caller may install the chat app for the team (a team owner or an admin).
type ChatIntegration func(ctx context.Context, team string, mayLink bool) (Integration, error)

// CodeHostConfig configures the code-host app.
type CodeHostConfig struct {
	// AppURL is the app's page on the code host (https://github.com/apps/<name>); its
	// install flow starts at <AppURL>/installations/new. Empty: no install link is given.
	AppURL string
	// StateKey signs the install flow's state (domain.CodeHostStateKey).
	StateKey []byte
}

// CodeHostDeps are what the code host's use cases need.
type CodeHostDeps struct {
	Store     CodeHostStore
	Runs      Runs
	Workflows Workflows
	Settings  Settings
	Teams     Teams
	Now       func() time.Time
	Log       *slog.Logger
}

// CodeHost keeps the code host's installations and their links to teams, and starts the
// linked teams' workflows from its deliveries.
type CodeHost struct {
	CodeHostDeps
	cfg CodeHostConfig
	// Chat answers the chat platform's entry of GET /integration (Chat.Integration); nil
	// lists it linked when the instance's chat bot token is set (settings chat.botToken),
	// unlinked otherwise.
	Chat ChatIntegration
}

// NewCodeHost returns the code host's use cases.
func NewCodeHost(cfg CodeHostConfig, deps CodeHostDeps) *CodeHost {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	return &CodeHost{CodeHostDeps: deps, cfg: cfg}
}

// Delivery is one delivery of the code host's webhook, as received.
type Delivery struct {
	// Event is the event name (X-Host-Event or X-GitHub-Event).
	Event string
	// ID is the delivery's id (X-Host-Delivery or X-GitHub-Delivery).
	ID string
	// Signature is the signature header's value.
	Signature string
	// Body is the raw body the signature covers.
	Body []byte
}

// DeliveryResult is the answer to a delivery: the runs it started and the runs the runs
// service refused (a quota, a workflow gone), each refusal failing only its own run.
type DeliveryResult struct {
	Runs    []*events.WorkflowRun `json:"runs"`
	Refused []domain.Refusal      `json:"refused,omitempty"`
	// Replayed says the delivery was handled before: its runs are answered again and
	// nothing new is run.
	Replayed bool `json:"replayed,omitempty"`
}

// Events of the code host that are not about what happened in repositories.
const (
	eventPing                     = "ping"
	eventInstallation             = "installation"
	eventInstallationRepositories = "installation_repositories"
)

// eventName is what an event name may look like (`push`, `pull_request`, …).
var eventName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Deliver handles a delivery of the code host: its signature is checked over the raw body
// with the webhook secret of settings first, and nothing is read before it verifies.
// Installation events update the installation's record; any other event starts a run of
// each of the linked team's active workflows whose codehost trigger is enabled and whose
// conditions hold on the payload. A delivery seen in the last domain.DeliveryTTL is
// answered as it was, running nothing new.
func (c *CodeHost) Deliver(ctx context.Context, d Delivery) (DeliveryResult, error) {
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return DeliveryResult{}, err
	}
	if st.CodeHost.WebhookSecret == "" {
		// Without a secret nothing can be verified, and nothing unverified is accepted.
		return DeliveryResult{}, apperr.New(apperr.IntegrationNotLinked, "The code-host app is not configured on this instance: an admin sets codehost.webhookSecret in the settings.")
	}
	if err := domain.VerifySignature(st.CodeHost.WebhookSecret, d.Body, d.Signature); err != nil {
		return DeliveryResult{}, err
	}
	if !eventName.MatchString(d.Event) {
		return DeliveryResult{}, apperr.New(apperr.RequestInvalid, "The event name %q is not one the code host sends.", d.Event)
	}
	if d.ID == "" || len(d.ID) > domain.MaxDeliveryID {
		return DeliveryResult{}, apperr.New(apperr.RequestInvalid, "A delivery id of 1 to %d characters is required (X-Host-Delivery or X-GitHub-Delivery).", domain.MaxDeliveryID)
	}
	payload, err := decodePayload(d.Body)
	if err != nil {
		return DeliveryResult{}, err
	}
	if d.Event == eventPing {
		return DeliveryResult{Runs: []*events.WorkflowRun{}}, nil
	}
	now := c.Now()
	rec, found, err := c.Store.FindDelivery(ctx, d.ID)
	if err != nil {
		return DeliveryResult{}, err
	}
	if found && now.Sub(rec.Received) < domain.DeliveryTTL {
		return c.replay(ctx, d, rec, payload)
	}
	rec = domain.Delivery{ID: d.ID, Event: d.Event, Received: now}
	res := DeliveryResult{Runs: []*events.WorkflowRun{}}
	switch d.Event {
	case eventInstallation, eventInstallationRepositories:
		rec.Installation, err = c.installationEvent(ctx, d.Event, d.Body, now)
	default:
		err = c.start(ctx, d, payload, &rec, &res)
	}
	if err != nil {
		return DeliveryResult{}, err
	}
	if err := c.Store.CreateDelivery(ctx, rec); err != nil && !errors.Is(err, domain.ErrDeliveryExists) {
		return DeliveryResult{}, err
	}
	return res, nil
}

// decodePayload reads a delivery's JSON object, numbers kept as written.
func decodePayload(body []byte) (map[string]any, error) {
	var payload map[string]any
	if err := jsonbody.DecodeNumbers(body, &payload); errors.Is(err, jsonbody.ErrTrailing) {
		return nil, apperr.New(apperr.RequestInvalid, "The delivery's body has data after its JSON object.")
	} else if err != nil || payload == nil {
		return nil, apperr.New(apperr.RequestInvalid, "The delivery's body is not a JSON object.")
	}
	return payload, nil
}

// installationEvent records an installation event on its installation.
func (c *CodeHost) installationEvent(ctx context.Context, event string, body []byte, now time.Time) (int64, error) {
	var e domain.InstallationEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return 0, apperr.Wrap(apperr.RequestInvalid, err, "The %s event is not one the code host sends.", event)
	}
	id := e.Installation.ID
	if id <= 0 {
		return 0, apperr.New(apperr.RequestInvalid, "The %s event names no installation.", event)
	}
	_, err := c.Store.UpdateInstallation(ctx, id, func(in *domain.Installation) error {
		before := in.Team
		in.Apply(event, e, now)
		if before != "" && in.Team == "" {
			c.Log.InfoContext(ctx, "code-host installation unlinked", "installation", id, "team", before, "action", e.Action)
		}
		return nil
	})
	return id, err
}

// delivered is who and what a delivery is about, as its payload says.
type delivered struct {
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
	Sender struct {
		Login string `json:"login"`
	} `json:"sender"`
}

// start runs the linked team's workflows the delivery triggers, recording each run in rec
// and answering it in res.
func (c *CodeHost) start(ctx context.Context, d Delivery, payload map[string]any, rec *domain.Delivery, res *DeliveryResult) error {
	var who delivered
	if err := json.Unmarshal(d.Body, &who); err != nil || who.Installation.ID <= 0 {
		// A repository's own webhook, not the app's: no installation, no team to run for.
		return nil
	}
	rec.Installation = who.Installation.ID
	in, err := c.Store.FindInstallation(ctx, who.Installation.ID)
	if errors.Is(err, domain.ErrInstallationNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !in.Runnable() {
		return nil
	}
	tw, err := c.Workflows.Triggers(ctx, in.Team, "codehost", "")
	if apperr.HasReason(err, apperr.TeamNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, w := range tw.Workflows {
		if w.Status != "active" || !w.Trigger.Enabled || domain.Holds(conditions(w.Trigger.Conditions), payload) != nil {
			continue
		}
		key := domain.RunKey(d.ID, w.Name)
		started, err := c.submit(ctx, in.Team, w.Name, key, d.Event, payload, who, res)
		if err != nil {
			return err
		}
		if started {
			rec.Runs = append(rec.Runs, domain.DeliveryRun{Team: in.Team, Workflow: w.Name, Key: key})
		}
	}
	rec.Refused = res.Refused
	return nil
}

// replay answers a delivery handled before: the runs it started, read back through their
// idempotency keys (the runs service answers the run a key names and starts nothing), and
// the refusals it got. Installation events are not applied again.
func (c *CodeHost) replay(ctx context.Context, d Delivery, rec domain.Delivery, payload map[string]any) (DeliveryResult, error) {
	res := DeliveryResult{Runs: []*events.WorkflowRun{}, Replayed: true}
	var who delivered
	_ = json.Unmarshal(d.Body, &who) // the first delivery read it; a replay answers the same runs regardless
	for _, r := range rec.Runs {
		if _, err := c.submit(ctx, r.Team, r.Workflow, r.Key, rec.Event, payload, who, &res); err != nil {
			return DeliveryResult{}, err
		}
	}
	res.Refused = append(res.Refused, rec.Refused...)
	return res, nil
}

// submit starts one run of a delivery (started), or adds the runs service's refusal to
// res. Only a failure to reach the runs service is returned: the code host may deliver
// again, and the idempotency keys keep the runs already started from starting twice.
func (c *CodeHost) submit(ctx context.Context, team, workflow, key, event string, payload map[string]any, who delivered, res *DeliveryResult) (started bool, err error) {
	req := runsapi.SubmitRun{
		Params:         map[string]any{"data": payload, "event": event},
		Trigger:        "codehost",
		IdempotencyKey: key,
		InitiatedBy:    runsapi.Initiator{Type: "codehost", ID: strconv.FormatInt(who.Installation.ID, 10), Name: who.Sender.Login},
	}
	run, err := c.Runs.Submit(ctx, team, workflow, req)
	if err == nil {
		if run.Run != nil {
			res.Runs = append(res.Runs, run.Run)
		}
		return true, nil
	}
	e, ok := apperr.As(err)
	if !ok || e.Reason.Kind.HTTPStatus() >= 500 {
		return false, err
	}
	res.Refused = append(res.Refused, domain.Refusal{Team: team, Workflow: workflow, Status: e.Reason.Kind.HTTPStatus(), Reason: e.Reason.Name, Message: e.Message})
	return false, nil
}

func conditions(cs []workflowsapi.Condition) []domain.Condition {
	out := make([]domain.Condition, len(cs))
	for i, c := range cs {
		out[i] = domain.Condition{Field: c.Field, Operation: c.Operation, Value: c.Value, Values: c.Values}
	}
	return out
}

// mayLink reports whether p may link and unlink team's installations and install apps for
// it: an admin, or a person who owns the team acting as themself (a user or session
// principal; a user token only if its permissions reach integration/write). Team,
// workflow and global tokens never may: a link decides which code runs for the team.
func mayLink(p auth.Principal, team string) bool {
	if p.IsAdmin() {
		return true
	}
	return (p.Type == auth.TypeUser || p.Type == auth.TypeSession) && p.Teams[team] == auth.RoleOwner &&
		p.Can(auth.TeamScope(team), "integration", "write")
}

// principal returns the caller, 401 for none.
func principal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.FromContext(ctx)
	if !ok || p.Type == auth.TypeAnonymous {
		return auth.Principal{}, apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return p, nil
}

// Integrations lists the integrations of team and their state there: the code host
// (linked when an installation is linked to the team; ref the installations' ids) and the
// chat platform. Callers who may link get the code host's install link, which carries a
// signed state naming the team and themselves and expiring after domain.StateTTL.
func (c *CodeHost) Integrations(ctx context.Context, team string) ([]Integration, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if team == "" {
		return nil, apperr.Invalid(apperr.QueryInvalidFilters, "The query parameter team is required.", apperr.FieldError{Field: "team", Message: "required"})
	}
	if err := c.Teams.Team(ctx, team); err != nil {
		return nil, err
	}
	if _, err := auth.Require(ctx, auth.TeamScope(team), "integration", "read"); err != nil {
		return nil, err
	}
	ins, err := c.Store.FindInstallationsByTeam(ctx, team)
	if err != nil {
		return nil, err
	}
	may := mayLink(p, team)
	host := Integration{ID: "codehost", Name: "Code host", Icon: codehostIcon, Status: StatusUnlinked,
		Description: "Runs the team's workflows whose codehost trigger is enabled on the events of the repositories the code-host app is installed on (push, pull request, release, …).",
		Instructions: "Install the code-host app on an account or organisation from this integration's link, as a team owner: the install links it to the team. " +
			"Then enable the codehost trigger of the workflows to run, with conditions on the event's payload (for example $.ref equals refs/heads/main). " +
			"Runs get the params data (the payload) and event (the event name, such as push or pull_request)."}
	var ids []string
	for _, in := range ins {
		if in.Status != domain.InstallationDeleted {
			ids = append(ids, strconv.FormatInt(in.ID, 10))
		}
	}
	if len(ids) > 0 {
		host.Status, host.Ref = StatusLinked, strings.Join(ids, ",")
	}
	if may && c.cfg.AppURL != "" {
		now := c.Now()
		state := domain.SignInstallState(c.cfg.StateKey, domain.InstallState{Team: team, User: p.ID, Issued: now, Expires: now.Add(domain.StateTTL)})
		host.Link = strings.TrimRight(c.cfg.AppURL, "/") + "/installations/new?state=" + url.QueryEscape(state)
	}
	chat, err := c.chat(ctx, team, may)
	if err != nil {
		return nil, err
	}
	return []Integration{host, chat}, nil
}

func (c *CodeHost) chat(ctx context.Context, team string, may bool) (Integration, error) {
	if c.Chat != nil {
		return c.Chat(ctx, team, may)
	}
	st, err := c.Settings.IntegrationSettings(ctx)
	if err != nil {
		return Integration{}, err
	}
	in := Integration{ID: "chat", Name: "Chat", Icon: chatIcon, Status: StatusUnlinked,
		Description:  "Runs workflows from slash commands, posts run status to channels and asks for approvals there.",
		Instructions: "An admin sets the chat app's credentials in the settings (chat.clientId, chat.clientSecret, chat.signingSecret, chat.botToken)."}
	if st.Chat.BotToken != "" {
		in.Status = StatusLinked
	}
	return in, nil
}

// CodeHostLink is an installation and the team it is linked to; a team's installation
// (TeamInstallation) adds what v4's Configure tab reads of it.
type CodeHostLink struct {
	InstallationID int64  `json:"installationId"`
	Team           string `json:"team"`
	Status         string `json:"status"`
	// OrgSlug and OrgType are the account the installation was made on and its kind
	// (User, Organization).
	OrgSlug string `json:"orgSlug,omitempty"`
	OrgType string `json:"orgType,omitempty"`
	// Repositories are their full names; Events the events the code host sends for it.
	Repositories []string `json:"repositories,omitempty"`
	Events       []string `json:"events,omitempty"`
}

// TeamInstallation answers the installation linked to team (the one of lowest id when
// there are several), for a caller who may read the team's integrations; 404
// INTEGRATION_NOT_LINKED when none is.
func (c *CodeHost) TeamInstallation(ctx context.Context, team string) (CodeHostLink, error) {
	if _, err := principal(ctx); err != nil {
		return CodeHostLink{}, err
	}
	if err := c.Teams.Team(ctx, team); err != nil {
		return CodeHostLink{}, err
	}
	if _, err := auth.Require(ctx, auth.TeamScope(team), "integration", "read"); err != nil {
		return CodeHostLink{}, err
	}
	ins, err := c.Store.FindInstallationsByTeam(ctx, team)
	if err != nil {
		return CodeHostLink{}, err
	}
	for _, in := range ins {
		if in.Status != domain.InstallationDeleted {
			return CodeHostLink{InstallationID: in.ID, Team: team, Status: StatusLinked, OrgSlug: in.AccountLogin,
				OrgType: in.AccountType, Repositories: in.Repositories, Events: in.Events}, nil
		}
	}
	return CodeHostLink{}, apperr.New(apperr.IntegrationNotLinked, "No code-host installation is linked to team '%s'.", team)
}

// Land is the install flow's landing: with a valid state it links installation id to the
// state's team. The state proves a team owner started the flow; the installation must
// also have been made in that flow (not before its start), or be linked to that team
// already. team, when given, must be the state's.
func (c *CodeHost) Land(ctx context.Context, id int64, team, state string) (CodeHostLink, error) {
	now := c.Now()
	st, err := domain.OpenState(c.cfg.StateKey, state, now)
	if err != nil {
		return CodeHostLink{}, err
	}
	if team != "" && team != st.Team {
		return CodeHostLink{}, apperr.New(apperr.RequestInvalid, "The team %q is not the team the install flow started for.", team)
	}
	if err := c.Teams.Team(ctx, st.Team); err != nil {
		return CodeHostLink{}, err
	}
	_, err = c.Store.UpdateInstallation(ctx, id, func(in *domain.Installation) error {
		switch {
		case in.Team == st.Team:
			return nil
		case in.Team != "":
			return alreadyLinked(id)
		case in.Status == domain.InstallationDeleted:
			return apperr.New(apperr.IntegrationNotLinked, "The code-host installation %d was deleted.", id)
		case !in.MadeInFlow(st.Issued):
			return apperr.New(apperr.PermissionDenied, "The code-host installation %d was not made in this install flow: a team owner links it with POST /api/v2/integration/codehost/link.", id)
		}
		in.Team, in.LinkedBy, in.LinkedAt, in.LinkIssued = st.Team, st.User, now, st.Issued
		in.Updated = now
		return nil
	})
	if err != nil {
		return CodeHostLink{}, err
	}
	c.Log.InfoContext(ctx, "code-host installation linked by its install flow", "installation", id, "team", st.Team, "user", st.User)
	return CodeHostLink{InstallationID: id, Team: st.Team, Status: StatusLinked}, nil
}

func alreadyLinked(id int64) error {
	return apperr.New(apperr.IntegrationAlreadyLinked, "The code-host installation %d is linked to another team: unlink it there first.", id)
}

// Link links installation id to team. The caller must own the team (or be an admin), and
// the installation must be proven by a verified delivery and active. One linked to another
// team is moved only by an admin.
func (c *CodeHost) Link(ctx context.Context, id int64, team string) (CodeHostLink, error) {
	p, err := c.linker(ctx, team)
	if err != nil {
		return CodeHostLink{}, err
	}
	now := c.Now()
	_, err = c.Store.UpdateInstallation(ctx, id, func(in *domain.Installation) error {
		switch {
		case !in.Provable():
			return apperr.New(apperr.IntegrationNotLinked, "The code-host installation %d is not known from the code host, or is suspended or deleted.", id)
		case in.Team == team:
			return nil
		case in.Team != "" && !p.IsAdmin():
			return alreadyLinked(id)
		}
		in.Team, in.LinkedBy, in.LinkedAt, in.LinkIssued = team, p.ID, now, time.Time{}
		in.Updated = now
		return nil
	})
	if err != nil {
		return CodeHostLink{}, err
	}
	c.Log.InfoContext(ctx, "code-host installation linked", "installation", id, "team", team, "by", p.ID)
	return CodeHostLink{InstallationID: id, Team: team, Status: StatusLinked}, nil
}

// Unlink removes the link of installation id to team; the caller must own the team (or be
// an admin). An installation not linked to team is INTEGRATION_NOT_LINKED.
func (c *CodeHost) Unlink(ctx context.Context, id int64, team string) error {
	p, err := c.linker(ctx, team)
	if err != nil {
		return err
	}
	in, err := c.Store.FindInstallation(ctx, id)
	if err != nil {
		return err
	}
	if in.Team != team {
		return apperr.New(apperr.IntegrationNotLinked, "The code-host installation %d is not linked to team '%s'.", id, team)
	}
	_, err = c.Store.UpdateInstallation(ctx, id, func(in *domain.Installation) error {
		if in.Team != team {
			return apperr.New(apperr.IntegrationNotLinked, "The code-host installation %d is not linked to team '%s'.", id, team)
		}
		in.Unlink()
		in.Updated = c.Now()
		return nil
	})
	if err == nil {
		c.Log.InfoContext(ctx, "code-host installation unlinked", "installation", id, "team", team, "by", p.ID)
	}
	return err
}

// linker checks that the caller may link team's installations: 401 without credentials,
// 404 for a team that does not exist, 403 for anyone but the team's owners and admins.
func (c *CodeHost) linker(ctx context.Context, team string) (auth.Principal, error) {
	p, err := principal(ctx)
	if err != nil {
		return auth.Principal{}, err
	}
	if err := c.Teams.Team(ctx, team); err != nil {
		return auth.Principal{}, err
	}
	if !mayLink(p, team) {
		return auth.Principal{}, apperr.New(apperr.PermissionDenied, "Only an owner of team '%s' (signed in as a user) or an admin links and unlinks its code-host installations.", team)
	}
	return p, nil
}

// TeamDeleted removes a deleted team's links.
func (c *CodeHost) TeamDeleted(ctx context.Context, team string) error {
	if err := c.Store.UnlinkTeam(ctx, team); err != nil {
		return fmt.Errorf("unlink deleted team %s: %w", team, err)
	}
	return nil
}

// Purge deletes the records of deliveries received before now less domain.DeliveryTTL.
func (c *CodeHost) Purge(ctx context.Context, now time.Time) error {
	return c.Store.PurgeDeliveries(ctx, now.Add(-domain.DeliveryTTL))
}
