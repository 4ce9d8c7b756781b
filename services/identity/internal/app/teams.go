// Package app holds identity's use cases. It depends on the interfaces it declares here,
// implemented by the storage and messaging adapters.
package app

import (
	"context"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/outbox"
	"github.com/baton-flow/baton/libs/page"
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
	// TeamNameTaken reports whether a live team holds name.
	TeamNameTaken(ctx context.Context, name string) (bool, error)
}

// Relay is told when events were stored, so they leave at once rather than at its next sweep.
type Relay interface{ Nudge() }

// Teams is the team use cases.
type Teams struct {
	store  TeamStore
	relay  Relay
	newID  func() string
	now    func() time.Time
	source string
}

// NewTeams returns the team use cases. newID makes record ids.
func NewTeams(store TeamStore, relay Relay, newID func() string) *Teams {
	return &Teams{store: store, relay: relay, newID: newID, now: time.Now, source: "/baton/identity"}
}

// CreateTeam creates a team named after name (slugged) and announces it.
func (s *Teams) CreateTeam(ctx context.Context, name string, ch domain.TeamChanges) (domain.Team, error) {
	t, err := domain.NewTeam(s.newID(), name, ch, s.now().UTC().Truncate(time.Millisecond))
	if err != nil {
		return domain.Team{}, err
	}
	e, err := events.New("team-created-"+t.ID, s.source, events.TypeTeamCreated, "/team/"+t.Name,
		events.TeamCreated{ID: t.ID, Name: t.Name, DisplayName: t.DisplayName, CreationDate: t.CreationDate})
	if err != nil {
		return domain.Team{}, err
	}
	entry, err := outbox.NewEntry(events.TeamEvents, t.Name, e)
	if err != nil {
		return domain.Team{}, err
	}
	if err := s.store.CreateTeam(ctx, t, []outbox.Entry{entry}); err != nil {
		return domain.Team{}, err
	}
	s.relay.Nudge()
	return t, nil
}

// Team returns the team called name.
func (s *Teams) Team(ctx context.Context, name string) (domain.Team, error) {
	return s.store.FindTeamByName(ctx, name)
}

// UpdateTeam applies changes to the team called name. A body name other than the path's
// is refused: names never change.
func (s *Teams) UpdateTeam(ctx context.Context, name, bodyName string, ch domain.TeamChanges) (domain.Team, error) {
	if bodyName != "" && domain.Slug(bodyName) != name {
		return domain.Team{}, apperr.Invalid(apperr.TeamInvalidReq,
			fmt.Sprintf("The body names team '%s' but the path names '%s'; team names cannot change.", bodyName, name),
			apperr.FieldError{Field: "name", Message: "differs from the path"})
	}
	return s.store.UpdateTeam(ctx, name, func(t *domain.Team) error { return t.Apply(ch) })
}

// DeleteTeam removes the team called name and announces it, so every service removes what
// belongs to it.
func (s *Teams) DeleteTeam(ctx context.Context, name string) error {
	err := s.store.DeleteTeam(ctx, name, func(t domain.Team) ([]outbox.Entry, error) {
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

// FindTeams searches teams.
func (s *Teams) FindTeams(ctx context.Context, f domain.TeamFilter, p page.Request) (page.Page[domain.Team], error) {
	teams, total, err := s.store.FindTeams(ctx, f, p)
	if err != nil {
		return page.Page[domain.Team]{}, err
	}
	return page.New(teams, p, total), nil
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
