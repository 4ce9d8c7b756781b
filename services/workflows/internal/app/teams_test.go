package app_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

type memTeams struct {
	mu    sync.Mutex
	teams map[string]domain.Team
}

func (m *memTeams) SaveTeam(_ context.Context, t domain.Team) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.teams[t.Name] = t
	return nil
}

func (m *memTeams) DeleteTeam(_ context.Context, name, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.teams[name].ID == id {
		delete(m.teams, name)
	}
	return nil
}

func (m *memTeams) FindTeamByName(_ context.Context, name string) (domain.Team, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.teams[name]
	if !ok {
		return domain.Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	}
	return t, nil
}

func (m *memTeams) ListTeams(context.Context) ([]domain.Team, error) { return nil, nil }

// identityTeams answers lookups from its map and counts them.
type identityTeams struct {
	teams map[string]domain.Team
	asked []string
}

func (i *identityTeams) LookupTeam(_ context.Context, name string) (domain.Team, error) {
	i.asked = append(i.asked, name)
	if t, ok := i.teams[name]; ok {
		return t, nil
	}
	if name == "broken" {
		return domain.Team{}, apperr.New(apperr.DependencyUnavailable, "identity is down")
	}
	return domain.Team{}, apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
}

func TestLookingUpTeams(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &memTeams{teams: map[string]domain.Team{"known": {ID: "k", Name: "known"}}}
	identity := &identityTeams{teams: map[string]domain.Team{"new": {ID: "n", Name: "new"}, "known": {ID: "k", Name: "known"}}}
	teams := app.NewTeams(store, func(context.Context, domain.Namespace) error { return nil })
	s := app.NewLookingUpTeams(store, identity, teams)

	tests := []struct {
		name   string
		wantID string
		reason apperr.Reason
		asked  []string
	}{
		{name: "known", wantID: "k"},
		{name: "new", wantID: "n", asked: []string{"new"}},
		{name: "new", wantID: "n", asked: []string{"new"}}, // recorded: not asked again
		{name: "nobody", reason: apperr.TeamNotFound, asked: []string{"new", "nobody"}},
		{name: "broken", reason: apperr.DependencyUnavailable, asked: []string{"new", "nobody", "broken"}},
	}
	for _, tt := range tests {
		got, err := s.FindTeamByName(ctx, tt.name)
		if tt.reason.Name != "" {
			assert.True(t, apperr.HasReason(err, tt.reason), "%s: %v", tt.name, err)
		} else {
			require.NoError(t, err, tt.name)
			assert.Equal(t, tt.wantID, got.ID, tt.name)
		}
		assert.Equal(t, tt.asked, identity.asked, tt.name)
	}
	_, err := store.FindTeamByName(ctx, "new")
	assert.NoError(t, err, "the team identity told of is recorded")
}
