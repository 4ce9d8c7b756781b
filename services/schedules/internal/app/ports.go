package app

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// Store keeps the teams' schedules.
type Store interface {
	// CreateSchedule stores a new schedule at version 1.
	CreateSchedule(ctx context.Context, s *domain.Schedule) error
	// FindSchedule reads one of team's schedules; SCHEDULE_NOT_FOUND when there is none.
	FindSchedule(ctx context.Context, team, id string) (*domain.Schedule, error)
	// SaveSchedule stores s on the version it was read at and moves s.Version;
	// domain.ErrConflict when another writer moved it first.
	SaveSchedule(ctx context.Context, s *domain.Schedule) error
	// FindSchedules answers one page of the schedules f selects, oldest first, and how many
	// it selects in all.
	FindSchedules(ctx context.Context, f Filter, r page.Request) ([]*domain.Schedule, int64, error)
	// FindWorkflowSchedules answers every schedule of team's workflow, archived ones too.
	FindWorkflowSchedules(ctx context.Context, team, workflow string) ([]*domain.Schedule, error)
	// NudgeBuffered makes schedule id due at now when it keeps a buffered fire waiting for
	// run to end; it reports whether it did.
	NudgeBuffered(ctx context.Context, id, run string, now time.Time) (bool, error)
	// DeleteTeamSchedules removes a team's schedules.
	DeleteTeamSchedules(ctx context.Context, team string) error
}

// Filter selects a team's schedules; empty lists select all.
type Filter struct {
	Team      string
	IDs       []string
	Statuses  []domain.Status
	Types     []domain.Type
	Workflows []string
}
