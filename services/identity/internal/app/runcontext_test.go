package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func TestRunContextOpensSecretsForServicesOnly(t *testing.T) {
	t.Parallel()
	box := newBox(t)
	users, teamStore := seedStores(t)
	teams := app.NewTeams(teamStore, users, teamsNopRelay{}, func() string { return "id" })
	teams.Secrets = box
	params := app.NewParams(&memParams{params: map[string]domain.Param{}}, box)
	system := app.NewSystem(&memSystem{}, box, "1.2.3")
	require.NoError(t, system.SeedSettings(context.Background()))
	rc := app.NewRunContexts(teams, params, system)

	_, err := params.CreateParam(adminCtx, domain.Param{Name: "token", Type: domain.ParamPassword, Value: "gl0bal"})
	require.NoError(t, err)
	owner := auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeUser, ID: "u-dev"})
	_, err = teams.UpdateTeam(owner, "infra", "", app.TeamInput{Parameters: []domain.TeamParam{
		{Name: "db", Type: domain.TeamParamPassword, Value: json.RawMessage(`{"user":"u","pass":"p"}`)},
		{Name: "blank", Type: domain.TeamParamPassword, Value: json.RawMessage(`""`)},
	}})
	require.NoError(t, err)
	// A password stored before sealing existed reads as stored.
	_, err = teamStore.UpdateTeam(context.Background(), "infra", func(tm *domain.Team) error {
		return tm.UpsertParams([]domain.TeamParam{{Name: "legacy", Type: domain.TeamParamPassword, Value: json.RawMessage(`"old"`)}})
	})
	require.NoError(t, err)

	got, err := rc.RunContext(auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeService, ID: "runs"}), "infra")
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"token": "gl0bal"}, got.GlobalParams)
	assert.Equal(t, map[string]any{"db": map[string]any{"user": "u", "pass": "p"}, "blank": "", "legacy": "old"}, got.TeamParams)
	assert.Equal(t, []string{"global.token", "team.db", "team.legacy"}, got.Secrets, "empty passwords are not listed")
	assert.Equal(t, domain.DefaultTeamQuotas, got.Quotas)
	assert.Equal(t, domain.DefaultTaskTimeout, got.TaskDefaultTimeout)

	tests := []struct {
		name     string
		ctx      context.Context
		team     string
		wantKind apperr.Kind
	}{
		{"a team member", owner, "infra", apperr.KindForbidden},
		{"an admin", adminCtx, "infra", apperr.KindForbidden},
		{"nobody", context.Background(), "infra", apperr.KindUnauthenticated},
		{"an unknown team", auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeService, ID: "runs"}), "nope", apperr.KindNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := rc.RunContext(tt.ctx, tt.team)
			assert.Equal(t, tt.wantKind, apperr.KindOf(err))
		})
	}
}
