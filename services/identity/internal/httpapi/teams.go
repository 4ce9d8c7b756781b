package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// TeamRequest is the body of POST and PATCH /team.
type TeamRequest struct {
	Name        string             `json:"name"`
	DisplayName *string            `json:"displayName"`
	Status      *domain.TeamStatus `json:"status"`
	Labels      map[string]*string `json:"labels"`
	ExternalRef *string            `json:"externalRef"`
}

func (r TeamRequest) changes() domain.TeamChanges {
	return domain.TeamChanges{DisplayName: r.DisplayName, Status: r.Status, Labels: r.Labels, ExternalRef: r.ExternalRef}
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
	Members        []any             `json:"members"`
	ApproverGroups []any             `json:"approverGroups"`
	Parameters     []any             `json:"parameters"`
}

func teamView(t domain.Team) Team {
	labels := t.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	return Team{
		ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, Status: string(t.Status),
		CreationDate: t.CreationDate.UTC().Format(httpx.TimeFormat), Labels: labels, ExternalRef: t.ExternalRef,
		Members: []any{}, ApproverGroups: []any{}, Parameters: []any{},
	}
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
	t, err := h.teams.CreateTeam(c.UserContext(), name, req.changes())
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/team/"+t.Name, teamView(t))
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
	t, err := h.teams.UpdateTeam(c.UserContext(), c.Params("team"), req.Name, req.changes())
	if err != nil {
		return err
	}
	return c.JSON(teamView(t))
}

func (h *handlers) deleteTeam(c *fiber.Ctx) error {
	if err := h.teams.DeleteTeam(c.UserContext(), c.Params("team")); err != nil {
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
