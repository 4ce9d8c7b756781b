package domain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ give, want string }{
		{"My Flow", "my-flow"},
		{"platform_team", "platform-team"},
		{"  Ops & SRE!  ", "ops--sre"},
		{"Ünïcode Team", "ncode-team"},
		{"123", "123"},
		{"!!!", ""},
		{string(make([]byte, 0)) + "a" + string(repeat('b', 80)), "a" + string(repeat('b', 63))},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, domain.Slug(tt.give))
		})
	}
}

func repeat(r rune, n int) []rune {
	out := make([]rune, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestTeamName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give       string
		want       string
		wantReason *apperr.Reason
	}{
		{"Platform Team", "platform-team", nil},
		{"", "", &apperr.TeamInvalidReq},
		{"***", "", &apperr.TeamInvalidReq},
		{"query", "", &apperr.TeamReservedName},
		{"Validate Name", "", &apperr.TeamReservedName},
		{"ADMIN", "", &apperr.TeamReservedName},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, err := domain.TeamName(tt.give)
			if tt.wantReason != nil {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, *tt.wantReason), err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestNewTeamAndApply(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	team, err := domain.NewTeam("id1", "Platform Team", domain.TeamChanges{
		Labels: map[string]*string{"env": ptr("prod"), "org": ptr("infra")},
	}, now)
	require.NoError(t, err)
	assert.Equal(t, "platform-team", team.Name)
	assert.Equal(t, "Platform Team", team.DisplayName)
	assert.Equal(t, domain.TeamActive, team.Status)
	assert.Equal(t, now, team.CreationDate)

	require.NoError(t, team.Apply(domain.TeamChanges{
		DisplayName: ptr("Platform"),
		Status:      ptr(domain.TeamInactive),
		Labels:      map[string]*string{"env": nil, "tier": ptr("1")},
	}))
	assert.Equal(t, "Platform", team.DisplayName)
	assert.Equal(t, domain.TeamInactive, team.Status)
	assert.Equal(t, map[string]string{"org": "infra", "tier": "1"}, team.Labels)

	tests := []struct {
		name string
		give domain.TeamChanges
	}{
		{"unknown status", domain.TeamChanges{Status: ptr(domain.TeamStatus("archived"))}},
		{"empty label key", domain.TeamChanges{Labels: map[string]*string{" ": ptr("x")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tm := team
			err := tm.Apply(tt.give)
			require.Error(t, err)
			assert.Equal(t, apperr.KindInvalid, apperr.KindOf(err))
		})
	}
}

func TestTeamParamEffectiveValue(t *testing.T) {
	t.Parallel()
	raw := func(s string) json.RawMessage {
		if s == "" {
			return nil
		}
		return json.RawMessage(s)
	}
	tests := []struct {
		name       string
		give, gdef string
		want       any
		wantErr    bool
	}{
		{"the value wins", `"v"`, `"d"`, "v", false},
		{"no value takes the default", "", `"d"`, "d", false},
		{"null takes the default", `null`, `"d"`, "d", false},
		{"an empty string takes the default", `""`, `"d"`, "d", false},
		{"an empty string without a default stays", `""`, "", "", false},
		{"nothing at all", "", "", nil, false},
		{"numbers keep their text", `12345678901234567890`, "", json.Number("12345678901234567890"), false},
		{"objects stay objects", `{"a":[1,true]}`, "", map[string]any{"a": []any{json.Number("1"), true}}, false},
		{"broken JSON", `{"a":`, "", nil, true},
		{"two values", `1 2`, "", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := domain.TeamParam{Name: "p", Value: raw(tt.give), Default: raw(tt.gdef)}.EffectiveValue()
			if tt.wantErr {
				require.Error(t, err)
				assert.NotContains(t, err.Error(), tt.give, "the value stays out of the error")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
