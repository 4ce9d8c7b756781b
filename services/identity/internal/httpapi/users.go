package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// User is a user as the API shows it.
type User struct {
	ID            string            `json:"id"`
	Email         string            `json:"email,omitempty"`
	Name          string            `json:"name,omitempty"`
	DisplayName   string            `json:"displayName,omitempty"`
	Type          string            `json:"type,omitempty"`
	Status        string            `json:"status,omitempty"`
	Labels        map[string]string `json:"labels,omitempty"`
	CreationDate  string            `json:"creationDate,omitempty"`
	LastLoginDate string            `json:"lastLoginDate,omitempty"`
}

// UserSummary is what callers without user/read instance-wide see of other users.
type UserSummary struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName,omitempty"`
}

func userView(u domain.User) User {
	v := User{
		ID: u.ID, Email: u.Email, Name: u.Name, DisplayName: u.DisplayName, Type: string(u.Type),
		Status: string(u.Status), Labels: u.Labels,
	}
	if !u.CreationDate.IsZero() {
		v.CreationDate = u.CreationDate.UTC().Format(httpx.TimeFormat)
		if v.Labels == nil {
			v.Labels = map[string]string{}
		}
	}
	if u.LastLoginDate != nil {
		v.LastLoginDate = u.LastLoginDate.UTC().Format(httpx.TimeFormat)
	}
	return v
}

func userSummaryView(u domain.User) UserSummary {
	return UserSummary{ID: u.ID, Email: u.Email, Name: u.Name, DisplayName: u.DisplayName}
}

// UserRequest is the body of PATCH /user/{userId} and PATCH /profile; null fields are left
// alone, labels are merged (a null value removes a key).
type UserRequest struct {
	Name        *string            `json:"name"`
	DisplayName *string            `json:"displayName"`
	Email       *string            `json:"email"`
	Labels      map[string]*string `json:"labels"`
	Type        *domain.UserType   `json:"type"`
	Status      *domain.UserStatus `json:"status"`
}

func (r UserRequest) changes() domain.UserChanges {
	return domain.UserChanges{
		Name: r.Name, DisplayName: r.DisplayName, Email: r.Email, Labels: r.Labels, Type: r.Type, Status: r.Status,
	}
}

func (h *handlers) getUser(c *fiber.Ctx) error {
	u, err := h.users.User(c.UserContext(), c.Params("userId"))
	if err != nil {
		return err
	}
	return c.JSON(userView(u))
}

func (h *handlers) patchUser(c *fiber.Ctx) error {
	var req UserRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	if err := h.users.UpdateUser(c.UserContext(), c.Params("userId"), req.changes()); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

func (h *handlers) deleteUser(c *fiber.Ctx) error {
	if err := h.users.DeleteUser(c.UserContext(), c.Params("userId")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// queryUsers answers GET /user/query: `status` (the seed's name; `statuses` is read too),
// `ids`, `labels`, `order` (default DESC) and `sort` (name, creationDate or status; default
// name).
func (h *handlers) queryUsers(c *fiber.Ctx) error {
	p, err := httpx.Paging(c, 1000)
	if err != nil {
		return err
	}
	if p.Desc, err = httpx.Direction(c, "order", true); err != nil {
		return err
	}
	if p.Sort, err = httpx.SortField(c, "sort", domain.UserSortFields, "name"); err != nil {
		return err
	}
	var f domain.UserFilter
	if f.Labels, err = httpx.Labels(c); err != nil {
		return err
	}
	f.IDs = httpx.List(c, "ids")
	for _, s := range append(httpx.List(c, "status"), httpx.List(c, "statuses")...) {
		f.Statuses = append(f.Statuses, domain.UserStatus(s))
	}
	res, err := h.users.FindUsers(c.UserContext(), f, p)
	if err != nil {
		return err
	}
	if res.Limited {
		return c.JSON(page.Map(res.Page, userSummaryView))
	}
	return c.JSON(page.Map(res.Page, userView))
}

// UserProfile is the caller: their user record, teams and permissions. For a caller that
// is not a person (a token, a service) it describes the principal: `principalType` says
// which, and `type` is admin or operator only when it holds that role.
type UserProfile struct {
	User
	PrincipalType string        `json:"principalType"`
	Teams         []ProfileTeam `json:"teams"`
	// Permissions: a global grant as is ("**/read"), a team grant as "<team>:<grant>", a
	// workflow token's as "<team>/<workflow>:<grant>".
	Permissions []string `json:"permissions"`
}

// ProfileTeam is one of the caller's teams as v4's team summary shows it, with the
// caller's role there.
type ProfileTeam struct {
	Name         string            `json:"name"`
	DisplayName  string            `json:"displayName"`
	CreationDate string            `json:"creationDate,omitempty"`
	Status       string            `json:"status,omitempty"`
	ExternalRef  string            `json:"externalRef,omitempty"`
	Labels       map[string]string `json:"labels"`
	Role         string            `json:"role,omitempty"`
	Insights     TeamInsights      `json:"insights"`
}

// TeamInsights counts what a team holds; `workflows` is left out when it is not known.
type TeamInsights struct {
	Workflows *int `json:"workflows,omitempty"`
	Members   int  `json:"members"`
	Actions   int  `json:"actions"`
}

func profileTeamView(t app.ProfileTeam) ProfileTeam {
	v := ProfileTeam{
		Name: t.Name, DisplayName: t.DisplayName, Status: string(t.Status), ExternalRef: t.ExternalRef,
		Labels: t.Labels, Role: t.Role, Insights: TeamInsights(t.Insights),
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	if !t.CreationDate.IsZero() {
		v.CreationDate = t.CreationDate.UTC().Format(httpx.TimeFormat)
	}
	return v
}

func profileView(p app.Profile) UserProfile {
	v := UserProfile{User: userView(p.User), PrincipalType: p.PrincipalType, Teams: []ProfileTeam{}, Permissions: p.Permissions}
	if v.Permissions == nil {
		v.Permissions = []string{}
	}
	for _, t := range p.Teams {
		v.Teams = append(v.Teams, profileTeamView(t))
	}
	return v
}

func (h *handlers) getProfile(c *fiber.Ctx) error {
	p, err := h.users.Profile(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(profileView(p))
}

func (h *handlers) patchProfile(c *fiber.Ctx) error {
	var req UserRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return err
	}
	if err := h.users.UpdateProfile(c.UserContext(), req.changes()); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
