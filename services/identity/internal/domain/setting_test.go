package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func intPtr(n int) *int { return &n }

func strPtr(s string) *string { return &s }

// apperrFields returns the first field a validation error names.
func apperrFields(err error) (string, bool) {
	e, ok := apperr.As(err)
	if !ok || e.Reason.Kind != apperr.KindInvalid || len(e.Fields) == 0 {
		return "", false
	}
	return e.Fields[0].Field, true
}

func seeded(t *testing.T) domain.Settings {
	t.Helper()
	var s domain.Settings
	require.True(t, s.Seed(domain.SettingCatalogue()))
	return s
}

func fakeSeal(plain string) (string, error) { return "enc:v1:" + strings.ToUpper(plain), nil }

func TestSettingsSeed(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	v, ok := s.Value("task.default.timeout")
	require.True(t, ok)
	assert.Equal(t, "90", v)
	assert.Equal(t, int64(100_000), s.Int("quotas.maxWorkflowRunMonthly", 0))
	assert.True(t, s.Feature("global.parameters"))
	assert.False(t, s.Feature("enable.verified.tasks.edit"))
	assert.Len(t, s.FeatureFlags(), len(domain.Features))

	assert.False(t, s.Seed(domain.SettingCatalogue()), "seeding again changes nothing")

	require.NoError(t, s.Apply([]domain.SettingChange{{Key: "task", Config: []domain.ConfigChange{{Key: "default.timeout", Value: strPtr("30")}}}}, fakeSeal))
	// A definition changed by a newer release is refreshed; the value stays.
	s.Items[2].Config[0].Label = "old label"
	assert.True(t, s.Seed(domain.SettingCatalogue()))
	assert.Equal(t, "Default timeout (minutes)", s.Items[2].Config[0].Label)
	assert.Equal(t, int64(30), s.Int("task.default.timeout", 0))
}

func TestSettingsApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      []domain.SettingChange
		wantPath  string
		wantValue string
		wantField string
	}{
		{"number", []domain.SettingChange{{Key: "quotas", Config: []domain.ConfigChange{{Key: "maxWorkflowCount", Value: strPtr(" 7 ")}}}},
			"quotas.maxWorkflowCount", "7", ""},
		{"boolean in any case", []domain.SettingChange{{Key: "features", Config: []domain.ConfigChange{{Key: "insights", Value: strPtr("FALSE")}}}},
			"features.insights", "false", ""},
		{"sinks kept comma-separated", []domain.SettingChange{{Key: "events", Config: []domain.ConfigChange{{Key: "sinks", Value: strPtr("https://a.example\nhttps://b.example/x")}}}},
			"events.sinks", "https://a.example,https://b.example/x", ""},
		{"secured is sealed", []domain.SettingChange{{Key: "chat", Config: []domain.ConfigChange{{Key: "botToken", Value: strPtr("tok")}}}},
			"chat.botToken", "enc:v1:TOK", ""},
		{"nil changes nothing", []domain.SettingChange{{Key: "task", Config: []domain.ConfigChange{{Key: "default.timeout"}}}},
			"task.default.timeout", "90", ""},
		{"unknown setting", []domain.SettingChange{{Key: "x"}}, "", "", "[0].key"},
		{"unknown config", []domain.SettingChange{{Key: "task", Config: []domain.ConfigChange{{Key: "x", Value: strPtr("1")}}}}, "", "", "[0].config[0].key"},
		{"zero duration", []domain.SettingChange{{Key: "quotas", Config: []domain.ConfigChange{{Key: "maxWorkflowRunDuration", Value: strPtr("0")}}}}, "", "", "[0].config[0].value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := seeded(t)
			err := s.Apply(tt.give, fakeSeal)
			if tt.wantField != "" {
				field, ok := apperrFields(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, tt.wantField, field)
				return
			}
			require.NoError(t, err)
			got, _ := s.Value(tt.wantPath)
			assert.Equal(t, tt.wantValue, got)
		})
	}
}

func TestSettingsSecretsKeptMaskedAndCleared(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	set := func(v *string) error {
		return s.Apply([]domain.SettingChange{{Key: "codehost", Config: []domain.ConfigChange{{Key: "webhookSecret", Value: v}}}}, fakeSeal)
	}
	require.NoError(t, set(strPtr("hook")))
	require.NoError(t, set(strPtr(secrets.Mask)))
	got, _ := s.Value("codehost.webhookSecret")
	assert.Equal(t, "enc:v1:HOOK", got, "the mask keeps the stored secret")

	masked := s.Masked()
	shown, _ := masked.Value("codehost.webhookSecret")
	assert.Equal(t, secrets.Mask, shown)
	got, _ = s.Value("codehost.webhookSecret")
	assert.Equal(t, "enc:v1:HOOK", got, "Masked leaves the original alone")
	shown, _ = masked.Value("chat.botToken")
	assert.Equal(t, "", shown, "an unset secret shows empty")

	require.NoError(t, set(strPtr("")))
	got, _ = s.Value("codehost.webhookSecret")
	assert.Equal(t, "", got)

	boom := errors.New("no key")
	err := s.Apply([]domain.SettingChange{{Key: "chat", Config: []domain.ConfigChange{{Key: "botToken", Value: strPtr("t")}}}},
		func(string) (string, error) { return "", boom })
	assert.ErrorIs(t, err, boom)
}

func TestNavigationLeavesOutEmptyMenus(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	var off []domain.ConfigChange
	for _, f := range []string{"team.management", "team.tasks", "team.parameters", "workflow.tokens", "workflow.quotas"} {
		off = append(off, domain.ConfigChange{Key: f, Value: strPtr("false")})
	}
	require.NoError(t, s.Apply([]domain.SettingChange{{Key: "features", Config: off}}, fakeSeal))
	items := domain.Navigation(domain.NavAccess{Team: "a b", Member: true}, s)
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
		assert.NotContains(t, it.Link, " ", "team names are escaped in links")
	}
	assert.Equal(t, []string{"Home", "Workflows", "Activity", "Actions", "Schedules", "Insights"}, names)
}

func TestSettingsRunDefaults(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	assert.Equal(t, domain.DefaultTaskTimeout, s.TaskDefaultTimeout())
	assert.False(t, s.PreventSelfApproval())
	assert.Equal(t, 90, domain.Settings{}.TaskDefaultTimeout(), "unset reads the default")

	require.NoError(t, s.Apply([]domain.SettingChange{
		{Key: "task", Config: []domain.ConfigChange{{Key: "default.timeout", Value: strPtr("15")}}},
		{Key: "actions", Config: []domain.ConfigChange{{Key: "preventSelfApproval", Value: strPtr("true")}}},
	}, fakeSeal))
	assert.Equal(t, 15, s.TaskDefaultTimeout())
	assert.True(t, s.PreventSelfApproval())
}
