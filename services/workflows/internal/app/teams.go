// Package app holds the workflows service's use cases, over the interfaces it declares.
package app

import (
	"context"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// TeamStore keeps the record of known teams.
type TeamStore interface {
	// SaveTeam records t, replacing any record of the same name.
	SaveTeam(ctx context.Context, t domain.Team) error
	// DeleteTeam removes the record of the team with this name and id, if it is there.
	DeleteTeam(ctx context.Context, name, id string) error
	// FindTeamByName fails with an error of reason TEAM_NOT_FOUND.
	FindTeamByName(ctx context.Context, name string) (domain.Team, error)
}

// Teams follows identity's team announcements.
type Teams struct {
	store TeamStore
}

// NewTeams returns the team use cases.
func NewTeams(store TeamStore) *Teams { return &Teams{store: store} }

// TeamCreated records a new team. Delivered again, it writes the same record.
func (s *Teams) TeamCreated(ctx context.Context, t domain.Team) error {
	return s.store.SaveTeam(ctx, t)
}

// TeamDeleted forgets a team. Only the record of that incarnation is removed, so a late
// duplicate cannot remove a team created again under the same name.
func (s *Teams) TeamDeleted(ctx context.Context, name, id string) error {
	return s.store.DeleteTeam(ctx, name, id)
}

// Team returns the known team called name.
func (s *Teams) Team(ctx context.Context, name string) (domain.Team, error) {
	return s.store.FindTeamByName(ctx, name)
}
