package httpapi

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TeamRequest is the body of POST and PATCH /team.
type TeamRequest struct {
	Name           string                 `json:"name"`
	DisplayName    *string                `json:"displayName"`
	Status         *domain.TeamStatus     `json:"status"`
	Labels         map[string]*string     `json:"labels"`
	ExternalRef    *string                `json:"externalRef"`
	Members        []TeamMemberRequest    `json:"members"`
	ApproverGroups []ApproverGroupRequest `json:"approverGroups"`
	Parameters     []TeamParameter        `json:"parameters"`
	Quotas         *TeamQuotasRequest     `json:"quotas"`
}

// TeamMemberRequest adds a user, named by id or email, to a team with a role.
type TeamMemberRequest struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Role  string `json:"role"`
}

// ApproverGroupRequest creates or updates the approver group called Name. Approvers are
// user ids or emails, as strings or as {"id"} / {"email"} objects; omitting them keeps an
// existing group's approvers.
type ApproverGroupRequest struct {
	Name      string      `json:"name"`
	Approvers []MemberRef `json:"approvers"`
}

// MemberRef names a user: a string (an email when it has an @, else an id) or an object
// with `id` or `email`.
type MemberRef struct {
	ID    string `json:"id,omitempty"`
	Email string `json:"email,omitempty"`
}

// UnmarshalJSON accepts the string and the object forms.
func (r *MemberRef) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if strings.Contains(s, "@") {
			*r = MemberRef{Email: s}
		} else {
			*r = MemberRef{ID: s}
		}
		return nil
	}
	type plain MemberRef
	return json.Unmarshal(b, (*plain)(r))
}

func (r MemberRef) ref() app.MemberRef {
	return app.MemberRef{ID: strings.TrimSpace(r.ID), Email: strings.TrimSpace(r.Email)}
}

// TeamQuotasRequest overrides a team's limits; null fields are left alone.
type TeamQuotasRequest struct {
	MaxWorkflowCount       *int `json:"maxWorkflowCount"`
	MaxWorkflowRunMonthly  *int `json:"maxWorkflowRunMonthly"`
	MaxWorkflowStorage     *int `json:"maxWorkflowStorage"`
	MaxWorkflowRunStorage  *int `json:"maxWorkflowRunStorage"`
	MaxWorkflowRunDuration *int `json:"maxWorkflowRunDuration"`
	MaxConcurrentRuns      *int `json:"maxConcurrentRuns"`
}

// TeamParameter is a team parameter (the contract's AbstractParam), in and out, with v4's
// names (`key`, `defaultValue`) read and answered beside Baton's. Secret (password)
// values leave as "********".
type TeamParameter = param.Param

func teamParamFromJSON(p TeamParameter) domain.TeamParam {
	opts := make([]domain.TeamParamOption, len(p.Options))
	for i, o := range p.Options {
		opts[i] = domain.TeamParamOption(o)
	}
	return domain.TeamParam{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
		Default: present(p.Default), Value: present(p.Value), Required: p.Required,
		Placeholder: p.Placeholder, HelperText: p.HelperText, Options: opts,
		MinValueLength: p.MinValueLength, MaxValueLength: p.MaxValueLength,
		ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
	}
}

// present drops JSON null, so null values are omitted like every other null field.
func present(v json.RawMessage) json.RawMessage {
	if domain.IsAbsentValue(v) {
		return nil
	}
	return v
}

func teamParameterView(p domain.TeamParam) TeamParameter {
	var opts []param.Option
	for _, o := range p.Options {
		opts = append(opts, param.Option(o))
	}
	return TeamParameter{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: p.Type,
		Default: present(p.Default), Value: present(p.Value), Required: p.Required,
		Placeholder: p.Placeholder, HelperText: p.HelperText, Options: opts,
		MinValueLength: p.MinValueLength, MaxValueLength: p.MaxValueLength,
		ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
	}
}

func (r TeamRequest) input() app.TeamInput {
	in := app.TeamInput{DisplayName: r.DisplayName, Status: r.Status, Labels: r.Labels, ExternalRef: r.ExternalRef}
	for _, m := range r.Members {
		in.Members = append(in.Members, app.MemberInput{
			MemberRef: MemberRef{ID: m.ID, Email: m.Email}.ref(), Role: strings.TrimSpace(m.Role),
		})
	}
	for _, g := range r.ApproverGroups {
		gi := app.ApproverGroupInput{Name: g.Name}
		if g.Approvers != nil {
			gi.Approvers = make([]app.MemberRef, 0, len(g.Approvers))
		}
		for _, a := range g.Approvers {
			gi.Approvers = append(gi.Approvers, a.ref())
		}
		in.ApproverGroups = append(in.ApproverGroups, gi)
	}
	for _, p := range r.Parameters {
		in.Parameters = append(in.Parameters, teamParamFromJSON(p))
	}
	if q := r.Quotas; q != nil {
		in.Quotas = &domain.TeamQuotaOverrides{
			MaxWorkflowCount: q.MaxWorkflowCount, MaxWorkflowRunMonthly: q.MaxWorkflowRunMonthly,
			MaxWorkflowStorage: q.MaxWorkflowStorage, MaxWorkflowRunStorage: q.MaxWorkflowRunStorage,
			MaxWorkflowRunDuration: q.MaxWorkflowRunDuration, MaxConcurrentRuns: q.MaxConcurrentRuns,
		}
	}
	return in
}

// Team is a team as the API shows it.
type Team struct {
	ID             string            `json:"id"`
	Name           string            `json:"name"`
	DisplayName    string            `json:"displayName"`
	Status         string            `json:"status"`
	CreationDate   string            `json:"creationDate"`
	Labels         map[string]string `json:"labels"`
	ExternalRef    string            `json:"externalRef,omitempty"`
	Members        []TeamMember      `json:"members"`
	ApproverGroups []ApproverGroup   `json:"approverGroups"`
	Parameters     []TeamParameter   `json:"parameters"`
	Quotas         Quotas            `json:"quotas"`
}

// TeamMember is a member of a team, with the user's email and name.
type TeamMember struct {
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
	Name  string `json:"name,omitempty"`
	Role  string `json:"role"`
}

// ApproverGroup is a named set of members who may decide approvals.
type ApproverGroup struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Approvers []TeamMember `json:"approvers"`
}

// Quotas are a team's limits in force and what it uses of them. Usage reads 0 until the
// services owning each counter (workflows, runs) report it.
type Quotas struct {
	MaxWorkflowCount         int    `json:"maxWorkflowCount"`
	MaxWorkflowRunMonthly    int    `json:"maxWorkflowRunMonthly"`
	MaxWorkflowStorage       int    `json:"maxWorkflowStorage"`
	MaxWorkflowRunStorage    int    `json:"maxWorkflowRunStorage"`
	MaxWorkflowRunDuration   int    `json:"maxWorkflowRunDuration"`
	MaxConcurrentRuns        int    `json:"maxConcurrentRuns"`
	CurrentWorkflowCount     *int   `json:"currentWorkflowCount,omitempty"`
	CurrentRuns              *int   `json:"currentRuns,omitempty"`
	CurrentConcurrentRuns    *int   `json:"currentConcurrentRuns,omitempty"`
	CurrentRunTotalDuration  *int64 `json:"currentRunTotalDuration,omitempty"`
	CurrentRunMedianDuration *int64 `json:"currentRunMedianDuration,omitempty"`
	MonthlyResetDate         string `json:"monthlyResetDate,omitempty"`
}

func limitsView(q domain.TeamQuotas) Quotas {
	return Quotas{
		MaxWorkflowCount: q.MaxWorkflowCount, MaxWorkflowRunMonthly: q.MaxWorkflowRunMonthly,
		MaxWorkflowStorage: q.MaxWorkflowStorage, MaxWorkflowRunStorage: q.MaxWorkflowRunStorage,
		MaxWorkflowRunDuration: q.MaxWorkflowRunDuration, MaxConcurrentRuns: q.MaxConcurrentRuns,
	}
}

func quotasView(q domain.TeamQuotas, u domain.TeamQuotaUsage) Quotas {
	v := limitsView(q)
	v.CurrentWorkflowCount = &u.CurrentWorkflowCount
	v.CurrentRuns = &u.CurrentRuns
	v.CurrentConcurrentRuns = &u.CurrentConcurrentRuns
	v.CurrentRunTotalDuration = &u.CurrentRunTotalDuration
	v.CurrentRunMedianDuration = &u.CurrentRunMedianDuration
	v.MonthlyResetDate = u.MonthlyResetDate.UTC().Format(httpx.TimeFormat)
	return v
}

func memberView(d app.TeamDetails, userID string) TeamMember {
	role, _ := d.Team.RoleOf(userID)
	u := d.Users[userID]
	return TeamMember{ID: userID, Email: u.Email, Name: u.Name, Role: role}
}

func teamView(d app.TeamDetails) Team {
	t := d.Team
	labels := t.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	v := Team{
		ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, Status: string(t.Status),
		CreationDate: t.CreationDate.UTC().Format(httpx.TimeFormat), Labels: labels, ExternalRef: t.ExternalRef,
		Members: []TeamMember{}, ApproverGroups: []ApproverGroup{}, Parameters: []TeamParameter{},
		Quotas: quotasView(d.Quotas, d.Usage),
	}
	switch {
	case d.UsageUnknown:
		v.Quotas = limitsView(d.Quotas)
	case d.CountersOnly:
		v.Quotas.CurrentRunTotalDuration, v.Quotas.CurrentRunMedianDuration = nil, nil
	}
	for _, m := range t.Members {
		v.Members = append(v.Members, memberView(d, m.UserID))
	}
	for _, g := range t.ApproverGroups {
		ag := ApproverGroup{ID: g.ID, Name: g.Name, Approvers: []TeamMember{}}
		for _, id := range g.Approvers {
			ag.Approvers = append(ag.Approvers, memberView(d, id))
		}
		v.ApproverGroups = append(v.ApproverGroups, ag)
	}
	for _, p := range t.Parameters {
		v.Parameters = append(v.Parameters, teamParameterView(p))
	}
	return v
}

func (h *handlers) createTeam(c *fiber.Ctx) error {
	var req TeamRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	name := req.Name
	if name == "" && req.DisplayName != nil {
		name = *req.DisplayName
	}
	t, err := h.teams.CreateTeam(c.UserContext(), name, req.input())
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/team/"+t.Team.Name, teamView(t))
}

func (h *handlers) getTeam(c *fiber.Ctx) error {
	t, err := h.teams.Team(c.UserContext(), c.Params("team"))
	if err != nil {
		return err
	}
	return c.JSON(teamView(t))
}

func (h *handlers) patchTeam(c *fiber.Ctx) error {
	var req TeamRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	t, err := h.teams.UpdateTeam(c.UserContext(), c.Params("team"), req.Name, req.input())
	if err != nil {
		return err
	}
	return c.JSON(teamView(t))
}

func (h *handlers) deleteTeam(c *fiber.Ctx) error {
	force, err := httpx.Bool(c, "force", false)
	if err != nil {
		return err
	}
	if err := h.teams.DeleteTeam(c.UserContext(), c.Params("team"), force); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) queryTeams(c *fiber.Ctx) error {
	p, err := httpx.Paging(c, 1000)
	if err != nil {
		return err
	}
	if p.Desc, err = httpx.Direction(c, "order", true); err != nil {
		return err
	}
	if p.Sort, err = httpx.SortField(c, "sort", domain.TeamSortFields, "name"); err != nil {
		return err
	}
	var f domain.TeamFilter
	if f.Labels, err = httpx.Labels(c); err != nil {
		return err
	}
	f.Names = httpx.List(c, "teams")
	for _, s := range httpx.List(c, "statuses") {
		f.Statuses = append(f.Statuses, domain.TeamStatus(s))
	}
	res, err := h.teams.FindTeams(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	return c.JSON(page.Map(res, teamView))
}

// TeamNameCheckRequest is the body of POST /team/validate-name.
type TeamNameCheckRequest struct {
	Name string `json:"name"`
}

func (h *handlers) validateTeamName(c *fiber.Ctx) error {
	var req TeamNameCheckRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	name, err := h.teams.ValidateName(c.UserContext(), req.Name)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"name": name, "valid": true})
}

func (h *handlers) deleteTeamParameter(c *fiber.Ctx) error {
	name, err := url.PathUnescape(c.Params("name"))
	if err != nil {
		name = c.Params("name")
	}
	if err := h.teams.RemoveTeamParam(c.UserContext(), c.Params("team"), name); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) resetTeamQuotas(c *fiber.Ctx) error {
	if err := h.teams.ResetQuotas(c.UserContext(), c.Params("team")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) defaultTeamQuotas(c *fiber.Ctx) error {
	q, err := h.teams.DefaultQuotas(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(limitsView(q))
}

// TeamRole is a team role and the permissions it grants inside its team.
type TeamRole struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Permissions []string `json:"permissions"`
}

func (h *handlers) teamRoles(c *fiber.Ctx) error {
	var out []TeamRole
	for _, r := range app.TeamRoles() {
		out = append(out, TeamRole(r))
	}
	return c.JSON(out)
}
