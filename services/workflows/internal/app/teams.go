// Package app holds the workflows service's use cases, over the interfaces it declares.
package app

import (
	"context"

	"github.com/baton-flow/baton/libs/apperr"
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
	// ListTeams returns every known team.
	ListTeams(ctx context.Context) ([]domain.Team, error)
}

// Teams follows identity's team announcements.
type Teams struct {
	store TeamStore
	// purge removes everything a team incarnation had: its workflows and their versions.
	purge func(ctx context.Context, ns domain.Namespace) error
}

// NewTeams returns the team use cases. purge removes a deleted team's workflows.
func NewTeams(store TeamStore, purge func(ctx context.Context, ns domain.Namespace) error) *Teams {
	return &Teams{store: store, purge: purge}
}

// TeamCreated records a new team. Delivered again, it writes the same record. A record of
// an older incarnation still there (its deletion not seen) goes first, with its workflows.
func (s *Teams) TeamCreated(ctx context.Context, t domain.Team) error {
	old, err := s.store.FindTeamByName(ctx, t.Name)
	switch {
	case err == nil && old.ID != t.ID:
		if err := s.TeamDeleted(ctx, old.Name, old.ID); err != nil {
			return err
		}
	case err != nil && !apperr.HasReason(err, apperr.TeamNotFound):
		return err
	}
	return s.store.SaveTeam(ctx, t)
}

// TeamDeleted forgets a team and removes its workflows (API.md §3: a team's deletion
// cascades through every service). Only that incarnation is touched, so a late duplicate
// cannot remove a team created again under the same name.
func (s *Teams) TeamDeleted(ctx context.Context, name, id string) error {
	if err := s.purge(ctx, domain.Namespace{Team: name, TeamID: id}); err != nil {
		return err
	}
	return s.store.DeleteTeam(ctx, name, id)
}

// Team returns the known team called name.
func (s *Teams) Team(ctx context.Context, name string) (domain.Team, error) {
	return s.store.FindTeamByName(ctx, name)
}

// TeamLookup asks identity, which owns teams, about one.
type TeamLookup interface {
	// LookupTeam fails with an error of reason TEAM_NOT_FOUND when identity has no such team.
	LookupTeam(ctx context.Context, name string) (domain.Team, error)
}

// LookingUpTeams is a TeamStore that, for a team it has no record of, asks identity before
// answering TEAM_NOT_FOUND, and records the answer as the team.created event would have:
// a client that creates a team and at once its first workflow must not see the team
// missing because the event is still on its way.
type LookingUpTeams struct {
	TeamStore
	lookup TeamLookup
	teams  *Teams
}

// NewLookingUpTeams returns store, asking lookup about the teams it does not know and
// recording them through teams.
func NewLookingUpTeams(store TeamStore, lookup TeamLookup, teams *Teams) *LookingUpTeams {
	return &LookingUpTeams{TeamStore: store, lookup: lookup, teams: teams}
}

// FindTeamByName implements TeamStore.
func (s *LookingUpTeams) FindTeamByName(ctx context.Context, name string) (domain.Team, error) {
	t, err := s.TeamStore.FindTeamByName(ctx, name)
	if !apperr.HasReason(err, apperr.TeamNotFound) {
		return t, err
	}
	t, err = s.lookup.LookupTeam(ctx, name)
	if err != nil {
		return domain.Team{}, err
	}
	if err := s.teams.TeamCreated(ctx, t); err != nil {
		return domain.Team{}, err
	}
	return t, nil
}
