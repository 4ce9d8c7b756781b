package app_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

type teamsNopRelay struct{}

func (teamsNopRelay) Nudge() {}

// prefixSealer stands in for libs/secrets: it marks what it sealed.
type prefixSealer struct{}

func (prefixSealer) Seal(plain string) (string, error) { return "sealed:" + plain, nil }
func (prefixSealer) Open(s string) (string, error)     { return s[len("sealed:"):], nil }

func TestTeamSecretsAreSealedBeforeStorage(t *testing.T) {
	t.Parallel()
	users, teams := seedStores(t)
	s := app.NewTeams(teams, users, teamsNopRelay{}, func() string { return "id" })
	s.Secrets = prefixSealer{}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{Type: auth.TypeUser, ID: "u-dev"})
	param := func(value string) []domain.TeamParam {
		return []domain.TeamParam{{Name: "db", Type: domain.TeamParamPassword, Value: json.RawMessage(value)}}
	}
	stored := func() string {
		tm, err := teams.FindTeamByName(context.Background(), "infra")
		require.NoError(t, err)
		p, _ := tm.Param("db")
		return string(p.Value)
	}

	steps := []struct {
		name       string
		value      string
		wantStored string
	}{
		{"a new secret is sealed", `"s3cret"`, `"sealed:\"s3cret\""`},
		{"the mask keeps the sealed value", `"********"`, `"sealed:\"s3cret\""`},
		{"a new value is sealed again", `{"k":1}`, `"sealed:{\"k\":1}"`},
	}
	for _, st := range steps {
		d, err := s.UpdateTeam(ctx, "infra", "", app.TeamInput{Parameters: param(st.value)})
		require.NoError(t, err, st.name)
		assert.Equal(t, st.wantStored, stored(), st.name)
		shown, _ := d.Team.Param("db")
		assert.JSONEq(t, `"********"`, string(shown.Value), st.name)
	}
}
