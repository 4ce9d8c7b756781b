package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// Layers of parameters as RunContext.Secrets names them: "global.<name>", "team.<name>".
const (
	SecretLayerGlobal = "global."
	SecretLayerTeam   = "team."
)

// RunContext is what the runs service needs of identity when a run of a team is
// submitted: the values its tasks' parameters resolve against and the team's limits.
// It holds opened secrets: it must never reach a log line, an event or a user.
type RunContext struct {
	Team string
	// GlobalParams and TeamParams map parameter names to their effective values (see
	// domain.Param.EffectiveValue), decoded JSON, password values opened.
	GlobalParams map[string]any
	TeamParams   map[string]any
	// Secrets names the password parameters holding a value, with their layer
	// ("global.<name>", "team.<name>"), sorted: runs masks their values wherever it
	// shows text. Empty passwords are left out: there is nothing to mask.
	Secrets []string
	// Quotas are the team's limits in force, as the team's own answers show them.
	Quotas domain.TeamQuotas
	// TaskDefaultTimeout is in minutes (the task.default.timeout setting).
	TaskDefaultTimeout  int
	PreventSelfApproval bool
	// MaxDepth is how deep child runs may nest (the runs.maxDepth setting).
	MaxDepth int
	// MaxTreeRuns is how many runs one run may start below it (runs.maxTreeRuns).
	MaxTreeRuns int
}

// RunContexts answers the runs service's question of what a team's runs resolve against.
type RunContexts struct {
	teams  *Teams
	params *Params
	system *System
}

// NewRunContexts returns the run-context use case over the team, parameter and settings
// use cases, whose sealing, opening and quota rules it reuses.
func NewRunContexts(teams *Teams, params *Params, system *System) *RunContexts {
	return &RunContexts{teams: teams, params: params, system: system}
}

// RunContext returns the run context of the team called team; an unknown team answers
// 404 TEAM_NOT_FOUND. Only Baton's services may ask: the answer holds opened secrets.
func (s *RunContexts) RunContext(ctx context.Context, team string) (RunContext, error) {
	// 401 without a principal, 403 for any but Baton's own services.
	if _, err := callerPrincipal(ctx); err != nil {
		return RunContext{}, err
	}
	if _, err := auth.RequireService(ctx); err != nil {
		return RunContext{}, err
	}
	t, err := s.teams.store.FindTeamByName(ctx, team)
	if err != nil {
		return RunContext{}, err
	}
	quotas, err := s.teams.quotas(ctx, t)
	if err != nil {
		return RunContext{}, err
	}
	settings, err := s.system.ResolvedSettings(ctx)
	if err != nil {
		return RunContext{}, err
	}
	globals, globalSecrets, err := s.globalParams(ctx)
	if err != nil {
		return RunContext{}, err
	}
	own, teamSecrets, err := s.teamParams(t)
	if err != nil {
		return RunContext{}, err
	}
	names := slices.Concat(globalSecrets, teamSecrets)
	slices.Sort(names)
	return RunContext{
		Team: t.Name, GlobalParams: globals, TeamParams: own, Secrets: names, Quotas: quotas,
		TaskDefaultTimeout: settings.TaskDefaultTimeout(), PreventSelfApproval: settings.PreventSelfApproval(),
		MaxDepth: settings.MaxRunDepth(), MaxTreeRuns: settings.MaxTreeRuns(),
	}, nil
}

// hasSecret reports whether an opened password value is worth masking.
func hasSecret(v any) bool { return v != nil && v != "" }

// globalParams returns the global parameters' effective values, and the layered names
// of those holding a secret.
func (s *RunContexts) globalParams(ctx context.Context) (map[string]any, []string, error) {
	params, err := s.params.opened(ctx)
	if err != nil {
		return nil, nil, err
	}
	values := make(map[string]any, len(params))
	var secretNames []string
	for _, p := range params {
		v := p.EffectiveValue()
		values[p.Name] = v
		if p.Secret() && hasSecret(v) {
			secretNames = append(secretNames, SecretLayerGlobal+p.Name)
		}
	}
	return values, secretNames, nil
}

// teamParams is globalParams for t's own parameters.
func (s *RunContexts) teamParams(t domain.Team) (map[string]any, []string, error) {
	params, err := s.teams.openedParams(t)
	if err != nil {
		return nil, nil, err
	}
	values := make(map[string]any, len(params))
	var secretNames []string
	for _, p := range params {
		v, err := p.EffectiveValue()
		if err != nil {
			return nil, nil, fmt.Errorf("team %s: %w", t.Name, err)
		}
		values[p.Name] = v
		if p.Secret() && hasSecret(v) {
			secretNames = append(secretNames, SecretLayerTeam+p.Name)
		}
	}
	return values, secretNames, nil
}
