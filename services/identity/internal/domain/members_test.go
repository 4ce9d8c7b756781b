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

func teamOf(members ...domain.Member) domain.Team {
	return domain.Team{Name: "infra", Members: members}
}

func TestMembershipChanges(t *testing.T) {
	t.Parallel()
	owner := domain.Member{UserID: "o", Role: "owner"}
	editor := domain.Member{UserID: "e", Role: "editor"}
	tests := []struct {
		name        string
		team        domain.Team
		change      func(*domain.Team) error
		wantReason  *apperr.Reason
		wantMembers []domain.Member
	}{
		{"add", teamOf(owner), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "e", Role: "editor"}})
		}, nil, []domain.Member{owner, editor}},
		{"change a role", teamOf(owner, editor), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "e", Role: "reader"}})
		}, nil, []domain.Member{owner, {UserID: "e", Role: "reader"}}},
		{"unknown role", teamOf(owner), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "e", Role: "admin"}})
		}, &apperr.TeamInvalidUserRole, nil},
		{"demote the last owner", teamOf(owner, editor), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "o", Role: "editor"}})
		}, &apperr.TeamLastOwner, nil},
		{"swap owners in one change", teamOf(owner, editor), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "e", Role: "owner"}, {UserID: "o", Role: "reader"}})
		}, nil, []domain.Member{{UserID: "o", Role: "reader"}, {UserID: "e", Role: "owner"}}},
		{"a team without owners may gain members", teamOf(editor), func(t *domain.Team) error {
			return t.UpsertMembers([]domain.MemberChange{{UserID: "r", Role: "reader"}})
		}, nil, []domain.Member{editor, {UserID: "r", Role: "reader"}}},
		{"remove", teamOf(owner, editor), func(t *domain.Team) error {
			return t.RemoveMembers([]string{"e", "stranger"})
		}, nil, []domain.Member{owner}},
		{"remove the last owner", teamOf(owner, editor), func(t *domain.Team) error {
			return t.RemoveMembers([]string{"o"})
		}, &apperr.TeamLastOwner, nil},
		{"remove from a team without owners", teamOf(editor), func(t *domain.Team) error {
			return t.RemoveMembers([]string{"e"})
		}, nil, []domain.Member{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			team := tt.team.Clone()
			err := tt.change(&team)
			if tt.wantReason != nil {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, *tt.wantReason), err.Error())
				return
			}
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.wantMembers, team.Members)
		})
	}
}

func TestApproverGroupChanges(t *testing.T) {
	t.Parallel()
	team := teamOf(domain.Member{UserID: "a", Role: "owner"}, domain.Member{UserID: "b", Role: "reader"})
	require.NoError(t, team.UpsertApproverGroups([]domain.ApproverGroupChange{
		{ID: "g1", Name: " leads ", Approvers: []string{"a", "b", "a"}},
		{ID: "g2", Name: "empty"},
	}))
	assert.Equal(t, []domain.ApproverGroup{{ID: "g1", Name: "leads", Approvers: []string{"a", "b"}}, {ID: "g2", Name: "empty"}}, team.ApproverGroups)

	before := team.Clone()
	require.NoError(t, team.UpsertApproverGroups([]domain.ApproverGroupChange{{ID: "ignored", Name: "leads"}}))
	assert.True(t, domain.SameMembership(before, team), "nil approvers keep the group's")
	require.NoError(t, team.UpsertApproverGroups([]domain.ApproverGroupChange{{ID: "ignored", Name: "leads", Approvers: []string{"b"}}}))
	assert.Equal(t, domain.ApproverGroup{ID: "g1", Name: "leads", Approvers: []string{"b"}}, team.ApproverGroups[0])
	assert.False(t, domain.SameMembership(before, team))

	tests := []struct {
		name string
		give domain.ApproverGroupChange
	}{
		{"no name", domain.ApproverGroupChange{Name: "  "}},
		{"a non-member", domain.ApproverGroupChange{Name: "x", Approvers: []string{"z"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tm := team.Clone()
			err := tm.UpsertApproverGroups([]domain.ApproverGroupChange{tt.give})
			assert.True(t, apperr.HasReason(err, apperr.TeamInvalidReq), "%v", err)
		})
	}

	require.NoError(t, team.RemoveMembers([]string{"b"}))
	assert.Empty(t, team.ApproverGroups[0].Approvers, "removed members leave their groups")
	team.RemoveApproverGroups([]string{"g1", "nope"})
	assert.Equal(t, []domain.ApproverGroup{{ID: "g2", Name: "empty"}}, team.ApproverGroups)
}

func TestSameMembershipIgnoresOrder(t *testing.T) {
	t.Parallel()
	a := domain.Team{
		Members:        []domain.Member{{UserID: "x", Role: "owner"}, {UserID: "y", Role: "reader"}},
		ApproverGroups: []domain.ApproverGroup{{ID: "g", Name: "n", Approvers: []string{"x", "y"}}},
	}
	b := domain.Team{
		Members:        []domain.Member{{UserID: "y", Role: "reader"}, {UserID: "x", Role: "owner"}},
		ApproverGroups: []domain.ApproverGroup{{ID: "g", Name: "n", Approvers: []string{"y", "x"}}},
	}
	assert.True(t, domain.SameMembership(a, b))
	b.Members[0].Role = "editor"
	assert.False(t, domain.SameMembership(a, b))
}

func paramJSON(s string) json.RawMessage { return json.RawMessage(s) }

func TestTeamParamsKeepSecretsAndMask(t *testing.T) {
	t.Parallel()
	team := domain.Team{Name: "infra"}
	require.NoError(t, team.UpsertParams([]domain.TeamParam{
		{Name: "db", Type: "password", Value: paramJSON(`"s3cret"`), Default: paramJSON(`"d"`)},
		{Name: "region", Type: "text", Value: paramJSON(`"eu"`)},
	}))
	tests := []struct {
		name        string
		give        domain.TeamParam
		wantValue   string
		wantDefault string
	}{
		{"the mask keeps the value", domain.TeamParam{Name: "db", Type: "password", Value: paramJSON(`"********"`), Label: "DB"}, `"s3cret"`, `"d"`},
		{"no value keeps it", domain.TeamParam{Name: "db", Type: "password"}, `"s3cret"`, `"d"`},
		{"null keeps it", domain.TeamParam{Name: "db", Type: "password", Value: paramJSON(`null`)}, `"s3cret"`, `"d"`},
		{"a new value replaces it", domain.TeamParam{Name: "db", Type: "password", Value: paramJSON(`"n3w"`)}, `"n3w"`, `"d"`},
		{"an empty string is a value", domain.TeamParam{Name: "db", Type: "password", Value: paramJSON(`""`)}, `""`, `"d"`},
		{"text values are replaced as given", domain.TeamParam{Name: "region", Type: "text"}, ``, ``},
		{"a new secret never stores the mask", domain.TeamParam{Name: "new", Type: "password", Value: paramJSON(`"********"`)}, ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tm := team.Clone()
			require.NoError(t, tm.UpsertParams([]domain.TeamParam{tt.give}))
			p, ok := tm.Param(tt.give.Name)
			require.True(t, ok)
			assert.Equal(t, tt.wantValue, string(p.Value))
			assert.Equal(t, tt.wantDefault, string(p.Default))
			assert.Equal(t, tt.give.Label, p.Label, "other fields are replaced")
		})
	}

	masked, _ := team.Param("db")
	masked = masked.Masked()
	assert.JSONEq(t, `"********"`, string(masked.Value))
	assert.JSONEq(t, `"********"`, string(masked.Default))
	plain, _ := team.Param("region")
	assert.Equal(t, plain, plain.Masked())
	stored, _ := team.Param("db")
	assert.JSONEq(t, `"s3cret"`, string(stored.Value), "masking a copy leaves the team alone")

	assert.True(t, apperr.HasReason(team.UpsertParams([]domain.TeamParam{{Name: " "}}), apperr.TeamInvalidReq))
	minLen, maxLen := 5, 2
	assert.True(t, apperr.HasReason(team.UpsertParams([]domain.TeamParam{{Name: "x", MinValueLength: &minLen, MaxValueLength: &maxLen}}), apperr.TeamInvalidReq))
	require.NoError(t, team.RemoveParam("region"))
	assert.True(t, apperr.HasReason(team.RemoveParam("region"), apperr.ParamsNotFound))
}

func TestQuotas(t *testing.T) {
	t.Parallel()
	five, zero, neg := 5, 0, -1
	var o domain.TeamQuotaOverrides
	assert.True(t, o.IsZero())
	assert.Equal(t, domain.DefaultTeamQuotas, o.Over(domain.DefaultTeamQuotas))

	team := domain.Team{}
	require.NoError(t, team.Apply(domain.TeamChanges{Quotas: &domain.TeamQuotaOverrides{MaxWorkflowCount: &five, MaxConcurrentRuns: &zero}}))
	got := team.QuotaOverrides.Over(domain.DefaultTeamQuotas)
	assert.Equal(t, 5, got.MaxWorkflowCount)
	assert.Equal(t, 0, got.MaxConcurrentRuns)
	assert.Equal(t, 100_000, got.MaxWorkflowRunMonthly)
	five = 6
	assert.Equal(t, 5, *team.QuotaOverrides.MaxWorkflowCount, "overrides are copied, not aliased")

	err := team.Apply(domain.TeamChanges{Quotas: &domain.TeamQuotaOverrides{MaxWorkflowStorage: &neg}})
	assert.True(t, apperr.HasReason(err, apperr.TeamInvalidReq))

	merged := team.QuotaOverrides.Merge(domain.TeamQuotaOverrides{MaxWorkflowRunDuration: &five})
	assert.Equal(t, 6, *merged.MaxWorkflowRunDuration)
	assert.Nil(t, team.QuotaOverrides.MaxWorkflowRunDuration)

	tests := []struct {
		now, want time.Time
	}{
		{time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, domain.NewTeamQuotaUsage(tt.now).MonthlyResetDate)
	}
}
