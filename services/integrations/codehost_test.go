package integrations

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

func TestConfigFromEnvCodeHostAppURL(t *testing.T) {
	t.Parallel()
	key := strings.Repeat("ab", secrets.KeySize)
	tests := []struct {
		give string
		ok   bool
	}{
		{"", true},
		{"https://github.com/apps/baton", true},
		{"http://codehost.internal/apps/baton", true},
		{"github.com/apps/baton", false},
		{"ftp://codehost.example/apps/baton", false},
	}
	for _, tt := range tests {
		env := map[string]string{secrets.EnvKey: key, "BATON_CODEHOST_APP_URL": tt.give}
		cfg, err := ConfigFromEnv(func(k string) string { return env[k] })
		if !tt.ok {
			require.Error(t, err, tt.give)
			assert.Contains(t, err.Error(), "BATON_CODEHOST_APP_URL")
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.give, cfg.CodeHostAppURL)
	}
}

// unlinks records the teams whose links were removed; the rest of app.CodeHostStore is
// left to the nil interface (a call to it fails the test).
type unlinks struct {
	app.CodeHostStore
	teams []string
}

func (u *unlinks) UnlinkTeam(_ context.Context, team string) error {
	u.teams = append(u.teams, team)
	return nil
}

// A deleted team's links go; the team topic's other events change nothing.
func TestCodeHostTeamEvents(t *testing.T) {
	t.Parallel()
	store := &unlinks{}
	handle := codehostTeamEvents(app.NewCodeHost(app.CodeHostConfig{}, app.CodeHostDeps{Store: store}))
	created, err := events.New("team-created-1", events.Source("identity"), events.TypeTeamCreated, "/team/1", events.TeamCreated{ID: "1", Name: "ops"})
	require.NoError(t, err)
	deleted, err := events.New("team-deleted-1", events.Source("identity"), events.TypeTeamDeleted, "/team/1", events.TeamDeleted{ID: "1", Name: "ops"})
	require.NoError(t, err)
	require.NoError(t, handle(context.Background(), created))
	assert.Empty(t, store.teams)
	require.NoError(t, handle(context.Background(), deleted))
	assert.Equal(t, []string{"ops"}, store.teams)
}
