package storetest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func params(t *testing.T, s Stores) {
	ctx := context.Background()
	minLen := 2
	region := domain.Param{
		Name: "region", Label: "Region", Description: "where", Type: domain.ParamSelect,
		Default: "eu", Value: "us", Required: true, Placeholder: "pick", HelperText: "one of",
		Options: []domain.Option{{Key: "eu", Value: "Europe"}, {Key: "us", Value: "USA"}}, MinValueLength: &minLen,
	}
	limits := domain.Param{
		Name: "limits", Type: domain.ParamJSON,
		// Numbers come back exact, whatever their size.
		Value: map[string]any{"max": json.Number("12345678901234567890"), "ratio": json.Number("0.25"), "tags": []any{"a", "b"}},
	}
	password := domain.Param{Name: "api.key", Type: domain.ParamPassword, Value: "sealed:xyz", HiddenValue: true, ReadOnly: true}
	for _, p := range []domain.Param{region, limits, password} {
		require.NoError(t, s.Params.CreateParam(ctx, p))
	}
	err := s.Params.CreateParam(ctx, domain.Param{Name: "region", Type: domain.ParamText})
	assert.True(t, apperr.HasReason(err, apperr.ParamsNonUniqueReference), "%v", err)

	all, err := s.Params.FindParams(ctx)
	require.NoError(t, err)
	region.Version, limits.Version, password.Version = 1, 1, 1
	assert.Equal(t, []domain.Param{password, limits, region}, all)

	calls := 0
	got, err := s.Params.UpdateParam(ctx, "region", func(p *domain.Param) error {
		calls++
		if calls == 1 {
			_, err := s.Params.UpdateParam(ctx, "region", func(other *domain.Param) error {
				other.Description = "theirs"
				return nil
			})
			require.NoError(t, err)
		}
		p.Value = "eu"
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, int64(3), got.Version)
	assert.Equal(t, "theirs", got.Description)
	all, err = s.Params.FindParams(ctx)
	require.NoError(t, err)
	assert.Equal(t, got, all[2])

	_, err = s.Params.UpdateParam(ctx, "nothing", func(*domain.Param) error { return nil })
	assert.ErrorIs(t, err, domain.ErrParamNotFound)
	require.NoError(t, s.Params.DeleteParam(ctx, "limits"))
	assert.ErrorIs(t, s.Params.DeleteParam(ctx, "limits"), domain.ErrParamNotFound)
	all, err = s.Params.FindParams(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 2)
}

func system(t *testing.T, s Stores) {
	ctx := context.Background()
	st, err := s.System.FindSettings(ctx)
	require.NoError(t, err)
	assert.Equal(t, domain.Settings{}, st, "none before the first seed")

	// fn reporting false writes nothing.
	st, err = s.System.UpdateSettings(ctx, func(*domain.Settings) (bool, error) { return false, nil })
	require.NoError(t, err)
	assert.Zero(t, st.Version)

	item := domain.Setting{Key: "task", Name: "Tasks", Description: "task defaults", Type: "group", Config: []domain.SettingConfig{
		{Key: "timeout", Label: "Timeout", Type: domain.ConfigNumber, Value: "60", DefaultValue: "30", Required: true},
		{Key: "token", Label: "Token", Type: domain.ConfigSecured, Value: "sealed:abc"},
		{Key: "mode", Label: "Mode", Type: domain.ConfigSelect, Value: "a", Options: []domain.Option{{Key: "a", Value: "A"}}},
	}}
	st, err = s.System.UpdateSettings(ctx, func(st *domain.Settings) (bool, error) {
		st.Items = append(st.Items, item)
		return true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), st.Version)
	found, err := s.System.FindSettings(ctx)
	require.NoError(t, err)
	assert.Equal(t, domain.Settings{Items: []domain.Setting{item}, Version: 1}, found)

	calls := 0
	st, err = s.System.UpdateSettings(ctx, func(st *domain.Settings) (bool, error) {
		calls++
		if calls == 1 {
			_, err := s.System.UpdateSettings(ctx, func(other *domain.Settings) (bool, error) {
				other.Items[0].Name = "theirs"
				return true, nil
			})
			require.NoError(t, err)
		}
		st.Items[0].Config[0].Value = "90"
		return true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 2, calls)
	assert.Equal(t, int64(3), st.Version)
	found, err = s.System.FindSettings(ctx)
	require.NoError(t, err)
	assert.Equal(t, st, found)
	assert.Equal(t, "theirs", found.Items[0].Name)
	assert.Equal(t, "90", found.Items[0].Config[0].Value)

	a, err := s.System.FindActivation(ctx)
	require.NoError(t, err)
	assert.False(t, a.Activated)
	assert.Zero(t, a.Version)
	a, err = s.System.UpdateActivation(ctx, func(a *domain.Activation) (bool, error) {
		a.CodeHash = domain.HashCode("one-time")
		return true, nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.Version)
	a, err = s.System.UpdateActivation(ctx, func(a *domain.Activation) (bool, error) {
		a.Activated, a.ActivatedAt, a.CodeHash = true, at, ""
		return true, nil
	})
	require.NoError(t, err)
	got, err := s.System.FindActivation(ctx)
	require.NoError(t, err)
	assert.Equal(t, domain.Activation{Activated: true, ActivatedAt: at, Version: 2}, got)
	assert.Equal(t, got, a)
}
