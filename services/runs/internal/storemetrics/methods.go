package storemetrics

// Code below wraps each method of app.RunStore alike; the op label is the method's name in
// snake case.

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// CreateRun times the inner store's.
func (s *RunStore) CreateRun(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	start := time.Now()
	err := s.inner.CreateRun(ctx, r, tasks)
	s.observe(ctx, "create_run", start, err)
	return err
}

// FindRun times the inner store's.
func (s *RunStore) FindRun(ctx context.Context, id string) (*domain.Run, error) {
	start := time.Now()
	v0, err := s.inner.FindRun(ctx, id)
	s.observe(ctx, "find_run", start, err)
	return v0, err
}

// FindDefinition times the inner store's.
func (s *RunStore) FindDefinition(ctx context.Context, r *domain.Run) (*domain.Definition, error) {
	start := time.Now()
	v0, err := s.inner.FindDefinition(ctx, r)
	s.observe(ctx, "find_definition", start, err)
	return v0, err
}

// FindTaskRuns times the inner store's.
func (s *RunStore) FindTaskRuns(ctx context.Context, r *domain.Run) ([]*domain.TaskRun, error) {
	start := time.Now()
	v0, err := s.inner.FindTaskRuns(ctx, r)
	s.observe(ctx, "find_task_runs", start, err)
	return v0, err
}

// SaveStep times the inner store's.
func (s *RunStore) SaveStep(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	start := time.Now()
	err := s.inner.SaveStep(ctx, r, tasks, changed)
	s.observe(ctx, "save_step", start, err)
	return err
}

// SaveTasks times the inner store's.
func (s *RunStore) SaveTasks(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun, changed []int) error {
	start := time.Now()
	err := s.inner.SaveTasks(ctx, r, tasks, changed)
	s.observe(ctx, "save_tasks", start, err)
	return err
}

// Archive times the inner store's.
func (s *RunStore) Archive(ctx context.Context, r *domain.Run, tasks []*domain.TaskRun) error {
	start := time.Now()
	err := s.inner.Archive(ctx, r, tasks)
	s.observe(ctx, "archive", start, err)
	return err
}

// FindOwed times the inner store's.
func (s *RunStore) FindOwed(ctx context.Context, before time.Time, limit int) ([]domain.OwedRun, error) {
	start := time.Now()
	v0, err := s.inner.FindOwed(ctx, before, limit)
	s.observe(ctx, "find_owed", start, err)
	return v0, err
}

// DelayOwed times the inner store's.
func (s *RunStore) DelayOwed(ctx context.Context, run string, at time.Time) error {
	start := time.Now()
	err := s.inner.DelayOwed(ctx, run, at)
	s.observe(ctx, "delay_owed", start, err)
	return err
}

// ClearOwed times the inner store's.
func (s *RunStore) ClearOwed(ctx context.Context, recorded map[string]map[int64]bool) error {
	start := time.Now()
	err := s.inner.ClearOwed(ctx, recorded)
	s.observe(ctx, "clear_owed", start, err)
	return err
}

// ListInFlight times the inner store's.
func (s *RunStore) ListInFlight(ctx context.Context, f domain.InFlightFilter) ([]domain.InFlight, error) {
	start := time.Now()
	v0, err := s.inner.ListInFlight(ctx, f)
	s.observe(ctx, "list_in_flight", start, err)
	return v0, err
}

// SetQueued times the inner store's.
func (s *RunStore) SetQueued(ctx context.Context, id string, queued bool) error {
	start := time.Now()
	err := s.inner.SetQueued(ctx, id, queued)
	s.observe(ctx, "set_queued", start, err)
	return err
}

// TakeOver times the inner store's.
func (s *RunStore) TakeOver(ctx context.Context, id, from, owner string) (bool, error) {
	start := time.Now()
	v0, err := s.inner.TakeOver(ctx, id, from, owner)
	s.observe(ctx, "take_over", start, err)
	return v0, err
}

// FindDescendants times the inner store's.
func (s *RunStore) FindDescendants(ctx context.Context, id string) ([]string, error) {
	start := time.Now()
	v0, err := s.inner.FindDescendants(ctx, id)
	s.observe(ctx, "find_descendants", start, err)
	return v0, err
}

// FindStopped times the inner store's.
func (s *RunStore) FindStopped(ctx context.Context, ids []string) (map[string]bool, error) {
	start := time.Now()
	v0, err := s.inner.FindStopped(ctx, ids)
	s.observe(ctx, "find_stopped", start, err)
	return v0, err
}

// FindTaskRun times the inner store's.
func (s *RunStore) FindTaskRun(ctx context.Context, id string) (*domain.TaskRun, error) {
	start := time.Now()
	v0, err := s.inner.FindTaskRun(ctx, id)
	s.observe(ctx, "find_task_run", start, err)
	return v0, err
}

// FinalizeArchived times the inner store's.
func (s *RunStore) FinalizeArchived(ctx context.Context, id string) (bool, error) {
	start := time.Now()
	v0, err := s.inner.FinalizeArchived(ctx, id)
	s.observe(ctx, "finalize_archived", start, err)
	return v0, err
}

// FindRuns times the inner store's.
func (s *RunStore) FindRuns(ctx context.Context, f domain.RunFilter, p page.Request) ([]*domain.Run, int64, error) {
	start := time.Now()
	v0, v1, err := s.inner.FindRuns(ctx, f, p)
	s.observe(ctx, "find_runs", start, err)
	return v0, v1, err
}

// CountRuns times the inner store's.
func (s *RunStore) CountRuns(ctx context.Context, f domain.RunFilter) (map[string]int64, error) {
	start := time.Now()
	v0, err := s.inner.CountRuns(ctx, f)
	s.observe(ctx, "count_runs", start, err)
	return v0, err
}

// Insight times the inner store's.
func (s *RunStore) Insight(ctx context.Context, f domain.RunFilter, now time.Time, maxRuns int) (domain.Insight, error) {
	start := time.Now()
	v0, err := s.inner.Insight(ctx, f, now, maxRuns)
	s.observe(ctx, "insight", start, err)
	return v0, err
}

// FindUnfinished times the inner store's.
func (s *RunStore) FindUnfinished(ctx context.Context, team, workflow string) ([]string, error) {
	start := time.Now()
	v0, err := s.inner.FindUnfinished(ctx, team, workflow)
	s.observe(ctx, "find_unfinished", start, err)
	return v0, err
}

// CountDescendants times the inner store's.
func (s *RunStore) CountDescendants(ctx context.Context, id string) (int64, error) {
	start := time.Now()
	v0, err := s.inner.CountDescendants(ctx, id)
	s.observe(ctx, "count_descendants", start, err)
	return v0, err
}

// HasLiveRuns times the inner store's.
func (s *RunStore) HasLiveRuns(ctx context.Context, team string) (bool, error) {
	start := time.Now()
	v0, err := s.inner.HasLiveRuns(ctx, team)
	s.observe(ctx, "has_live_runs", start, err)
	return v0, err
}

// DeleteTeamRuns times the inner store's.
func (s *RunStore) DeleteTeamRuns(ctx context.Context, team string) error {
	start := time.Now()
	err := s.inner.DeleteTeamRuns(ctx, team)
	s.observe(ctx, "delete_team_runs", start, err)
	return err
}
