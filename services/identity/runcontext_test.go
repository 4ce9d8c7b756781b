package identity_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity"
)

// runsService is the caller the run-context endpoint is for.
var runsService = auth.Principal{Type: auth.TypeService, ID: "runs"}

// storedTeamParamValue reads a team parameter's value straight from the database: JSON text.
func (f *sysFixture) storedTeamParamValue(t *testing.T, team, name string) string {
	t.Helper()
	var doc struct {
		Parameters []struct {
			Name  string `bson:"name"`
			Value string `bson:"value"`
		} `bson:"parameters"`
	}
	require.NoError(t, f.db.Collection("teams").FindOne(context.Background(), bson.M{"key": team}).Decode(&doc))
	for _, p := range doc.Parameters {
		if p.Name == name {
			return p.Value
		}
	}
	require.FailNow(t, "no stored parameter "+name+" in team "+team)
	return ""
}

// newRunContextWorld is identity with global parameters and team "payments", whose
// parameters include a password and whose quotas override maxConcurrentRuns.
func newRunContextWorld(t *testing.T) *sysFixture {
	t.Helper()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	for _, body := range []string{
		`{"name": "region", "value": "eu"}`,
		`{"name": "deployKey", "type": "password", "value": "gl0bal-s3cret"}`,
		`{"name": "emptyKey", "type": "password"}`,
		`{"name": "retries", "type": "number", "default": 3}`,
		`{"name": "flags", "type": "json", "value": {"on": true}}`,
	} {
		code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/parameters", body)
		require.Equal(t, http.StatusCreated, code, raw)
	}
	code, raw := f.do(t, &sysAdmin, http.MethodPost, "/api/v2/team", `{"name": "payments",
		"parameters": [
			{"name": "db", "type": "password", "value": "t3am-s3cret", "default": "unused"},
			{"name": "region", "value": "us"},
			{"name": "cfg", "type": "json", "value": {"x": {"y": 1}}},
			{"name": "fallback", "value": "", "default": "dflt"}],
		"quotas": {"maxConcurrentRuns": 3}}`)
	require.Equal(t, http.StatusCreated, code, raw)
	var stored string
	require.NoError(t, json.Unmarshal([]byte(f.storedTeamParamValue(t, "payments", "db")), &stored))
	require.True(t, secrets.IsSealed(stored), "team passwords are sealed at rest: %q", stored)
	return f
}

func TestRunContextResolvesParametersAndLimits(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)

	code, raw := f.do(t, &runsService, http.MethodGet, "/internal/v1/teams/payments/run-context", "")
	require.Equal(t, http.StatusOK, code, raw)
	assert.JSONEq(t, `{
		"team": "payments",
		"globalParams": {"region": "eu", "deployKey": "gl0bal-s3cret", "emptyKey": null, "retries": 3, "flags": {"on": true}},
		"teamParams": {"db": "t3am-s3cret", "region": "us", "cfg": {"x": {"y": 1}}, "fallback": "dflt"},
		"secrets": ["global.deployKey", "team.db"],
		"quotas": {"maxWorkflowRunMonthly": 100000, "maxWorkflowRunDuration": 1440, "maxConcurrentRuns": 3, "maxWorkflowRunStorage": 2},
		"taskDefaultTimeout": 90,
		"preventSelfApproval": false,
		"maxDepth": 10,
		"maxTreeRuns": 1000
	}`, raw)

	// Settings change the defaults; the team's own override stays in force.
	code, raw = f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings", `[
		{"key": "task", "config": [{"key": "default.timeout", "value": 30}]},
		{"key": "actions", "config": [{"key": "preventSelfApproval", "value": true}]},
		{"key": "runs", "config": [{"key": "maxDepth", "value": 3}, {"key": "maxTreeRuns", "value": 50}]},
		{"key": "quotas", "config": [{"key": "maxWorkflowRunMonthly", "value": 500}, {"key": "maxConcurrentRuns", "value": 50}]}
	]`)
	require.Equal(t, http.StatusOK, code, raw)
	code, got := sysCall[map[string]any](t, f, runsService, http.MethodGet, "/internal/v1/teams/payments/run-context", "")
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, float64(30), got["taskDefaultTimeout"])
	assert.Equal(t, true, got["preventSelfApproval"])
	assert.Equal(t, float64(3), got["maxDepth"])
	assert.Equal(t, float64(50), got["maxTreeRuns"])
	assert.Equal(t, map[string]any{
		"maxWorkflowRunMonthly": float64(500), "maxWorkflowRunDuration": float64(1440),
		"maxConcurrentRuns": float64(3), "maxWorkflowRunStorage": float64(2),
	}, got["quotas"])
}

func TestRunContextIsOnlyForServices(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)
	tests := []struct {
		name       string
		who        *auth.Principal
		path       string
		wantCode   int
		wantReason string
	}{
		{"an unknown team", &runsService, "/internal/v1/teams/nope/run-context", http.StatusNotFound, "TEAM_NOT_FOUND"},
		{"an admin", &sysAdmin, "/internal/v1/teams/payments/run-context", http.StatusForbidden, "PERMISSION_DENIED"},
		{"a user", &sysUser, "/internal/v1/teams/payments/run-context", http.StatusForbidden, "PERMISSION_DENIED"},
		{"a team token", &sysTeamToken, "/internal/v1/teams/payments/run-context", http.StatusForbidden, "PERMISSION_DENIED"},
		{"anonymous", &anonymous, "/internal/v1/teams/payments/run-context", http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"unsigned", nil, "/internal/v1/teams/payments/run-context", http.StatusUnauthorized, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, tt.who, http.MethodGet, tt.path, "")
			require.Equal(t, tt.wantCode, code, raw)
			assert.Equal(t, tt.wantReason, reasonOf(t, raw))
			assert.NotContains(t, raw, "s3cret")
		})
	}
}

// The global parameters' names are for Baton's services (the workflows service checks
// references against them), without any value, through the identityapi contract.
func TestGlobalParameterNamesAreForServices(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)
	tests := []struct {
		name       string
		who        *auth.Principal
		wantCode   int
		wantReason string
	}{
		{"a service", &runsService, http.StatusOK, ""},
		{"an admin", &sysAdmin, http.StatusForbidden, "PERMISSION_DENIED"},
		{"a team token", &sysTeamToken, http.StatusForbidden, "PERMISSION_DENIED"},
		{"anonymous", &anonymous, http.StatusUnauthorized, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, tt.who, http.MethodGet, identityapi.ParametersPath, "")
			require.Equal(t, tt.wantCode, code, raw)
			assert.NotContains(t, raw, "s3cret")
			if tt.wantCode != http.StatusOK {
				assert.Equal(t, tt.wantReason, reasonOf(t, raw))
				return
			}
			dec := json.NewDecoder(strings.NewReader(raw))
			dec.DisallowUnknownFields()
			var got identityapi.GlobalParameters
			require.NoError(t, dec.Decode(&got))
			assert.Equal(t, []string{"deployKey", "emptyKey", "flags", "region", "retries"}, got.Names)
		})
	}
}

// The run context's every member is the contract's: it reads into identityapi.RunContext
// without leftovers and writes back the same.
func TestRunContextIsTheContract(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)
	code, raw := f.do(t, &runsService, http.MethodGet, identityapi.RunContextPath("payments"), "")
	require.Equal(t, http.StatusOK, code, raw)
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var rc identityapi.RunContext
	require.NoError(t, dec.Decode(&rc))
	again, err := json.Marshal(rc)
	require.NoError(t, err)
	assert.JSONEq(t, raw, string(again))
}

// A team is read as its team.created event announces it, through the identityapi contract.
func TestTeamRecordIsTheContract(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)
	code, raw := f.do(t, &runsService, http.MethodGet, identityapi.TeamPath("payments"), "")
	require.Equal(t, http.StatusOK, code, raw)
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var team identityapi.Team
	require.NoError(t, dec.Decode(&team))
	assert.Equal(t, "payments", team.Name)
	assert.NotEmpty(t, team.ID)
	assert.False(t, team.CreationDate.IsZero())

	code, raw = f.do(t, &runsService, http.MethodGet, identityapi.TeamPath("nope"), "")
	require.Equal(t, http.StatusNotFound, code, raw)
	assert.Equal(t, "TEAM_NOT_FOUND", reasonOf(t, raw))
	code, raw = f.do(t, &sysAdmin, http.MethodGet, identityapi.TeamPath("payments"), "")
	require.Equal(t, http.StatusForbidden, code, raw)
}

// What the workflows service needs of a team — its parameters' names and its workflow
// limit — is a service's question only, answered in the contract's type without a value.
func TestWorkflowContextIsForServices(t *testing.T) {
	t.Parallel()
	f := newRunContextWorld(t)
	workflowsService := auth.Principal{Type: auth.TypeService, ID: "workflows"}
	tests := []struct {
		name       string
		who        *auth.Principal
		team       string
		wantCode   int
		wantReason string
	}{
		{"a service", &workflowsService, "payments", http.StatusOK, ""},
		{"an unknown team", &workflowsService, "nope", http.StatusNotFound, "TEAM_NOT_FOUND"},
		{"an admin", &sysAdmin, "payments", http.StatusForbidden, "PERMISSION_DENIED"},
		{"a user", &sysUser, "payments", http.StatusForbidden, "PERMISSION_DENIED"},
		{"a team token", &sysTeamToken, "payments", http.StatusForbidden, "PERMISSION_DENIED"},
		{"anonymous", &anonymous, "payments", http.StatusUnauthorized, "UNAUTHENTICATED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := f.do(t, tt.who, http.MethodGet, identityapi.WorkflowContextPath(tt.team), "")
			require.Equal(t, tt.wantCode, code, raw)
			assert.NotContains(t, raw, "s3cret")
			if tt.wantCode != http.StatusOK {
				assert.Equal(t, tt.wantReason, reasonOf(t, raw))
				return
			}
			dec := json.NewDecoder(strings.NewReader(raw))
			dec.DisallowUnknownFields()
			var got identityapi.WorkflowContext
			require.NoError(t, dec.Decode(&got))
			assert.Equal(t, identityapi.WorkflowContext{Team: "payments", ParamNames: []string{"db", "region", "cfg", "fallback"},
				MaxWorkflowCount: 100}, got, "the installation's default limit")
		})
	}
}

// The integrations service reads the sinks and the apps' credentials, secrets opened;
// nobody else may.
func TestIntegrationSettings(t *testing.T) {
	t.Parallel()
	f := newSysFixture(t)
	f.start(t, identity.Config{})
	integrations := auth.Principal{Type: auth.TypeService, ID: "integrations", Name: "integrations"}
	code, got := sysCall[map[string]any](t, f, integrations, http.MethodGet, "/internal/v1/integration-settings", "")
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, []any{}, got["sinks"])

	code, raw := f.do(t, &sysAdmin, http.MethodPut, "/api/v2/settings", `[
		{"key": "events", "config": [{"key": "sinks", "value": "https://a.example/hook, http://b.example:8080/x"}]},
		{"key": "chat", "config": [{"key": "clientId", "value": "123.456"}, {"key": "signingSecret", "value": "sign-me"}]},
		{"key": "codehost", "config": [{"key": "webhookSecret", "value": "hook-secret"}]}
	]`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.NotContains(t, raw, "sign-me")
	code, got = sysCall[map[string]any](t, f, integrations, http.MethodGet, "/internal/v1/integration-settings", "")
	require.Equal(t, http.StatusOK, code, got)
	assert.Equal(t, []any{"https://a.example/hook", "http://b.example:8080/x"}, got["sinks"])
	assert.Equal(t, map[string]any{"clientId": "123.456", "signingSecret": "sign-me"}, got["chat"])
	assert.Equal(t, map[string]any{"webhookSecret": "hook-secret"}, got["codehost"])

	code, _ = f.do(t, &sysAdmin, http.MethodGet, "/internal/v1/integration-settings", "")
	assert.Equal(t, http.StatusForbidden, code)
}
