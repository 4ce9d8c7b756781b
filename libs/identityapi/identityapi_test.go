package identityapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/golden"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
)

// sampleTime is fixed so fixtures do not change from run to run.
var sampleTime = time.Date(2025, 3, 14, 15, 9, 26, 535000000, time.UTC)

func goldenCases() []golden.Case {
	return []golden.Case{
		{Name: "authenticate.token", Value: identityapi.AuthenticateRequest{Token: "btu_0123456789abcdef"}},
		{Name: "authenticate.signin", Value: identityapi.AuthenticateRequest{Email: "ada@example.com", Name: "Ada Lovelace"}},
		{Name: "authenticate.principal", Value: auth.Principal{Type: auth.TypeUser, ID: "6650c0ffee0000000000000b", Name: "Ada Lovelace",
			Email: "ada@example.com", Roles: []string{"operator"}, Teams: map[string]string{"platform": "owner"}}},
		{Name: "activation", Value: identityapi.ActivationState{Activated: true}},
		{Name: "parameters", Value: identityapi.GlobalParameters{Names: []string{"region", "registry-password"}}},
		{Name: "team", Value: identityapi.Team{ID: "6650c0ffee0000000000000a", Name: "platform", DisplayName: "Platform Team",
			CreationDate: sampleTime}},
		{Name: "run-context", Value: identityapi.RunContext{
			Team:         "platform",
			GlobalParams: map[string]any{"region": "eu-west-1", "retries": 3.0},
			TeamParams:   map[string]any{"registry-password": "s3cret", "flags": []any{"a", "b"}},
			Secrets:      []string{"team.registry-password"},
			Quotas: identityapi.RunQuotas{MaxWorkflowRunMonthly: 1000, MaxWorkflowRunDuration: 120,
				MaxConcurrentRuns: 10, MaxWorkflowRunStorage: 5},
			TaskDefaultTimeout: 30, PreventSelfApproval: true, MaxDepth: 5, MaxTreeRuns: 100,
		}},
		{Name: "workflow-context", Value: identityapi.WorkflowContext{Team: "platform", ParamNames: []string{"registry-password", "flags"},
			MaxWorkflowCount: 50}},
		{Name: "approver-groups", Value: identityapi.ApproverGroups{Team: "platform", Groups: []identityapi.ApproverGroup{
			{ID: "6650c0ffee0000000000000c", Name: "release-managers",
				Approvers: []string{"6650c0ffee0000000000000b", "6650c0ffee0000000000000d"}},
			{ID: "6650c0ffee0000000000000e", Name: "on-call", Approvers: []string{}},
		}}},
		{Name: "integration-settings", Value: identityapi.IntegrationSettings{
			Sinks: []string{"https://hooks.example.com/baton", "http://10.0.0.7:8080/events"},
			Chat: identityapi.ChatSettings{ClientID: "1234.5678", ClientSecret: "chat-client-secret",
				SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", BotToken: "xoxb-bot-token"},
			CodeHost: identityapi.CodeHostSettings{AppID: "424242", WebhookSecret: "hook-secret",
				PrivateKey: "-----BEGIN RSA PRIVATE KEY-----\n…\n-----END RSA PRIVATE KEY-----\n"},
		}},
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	golden.Check(t, goldenCases())
}

func TestNoStaleFixtures(t *testing.T) {
	t.Parallel()
	golden.NoStale(t, golden.Names(goldenCases()))
}

func TestActivationStateNeedsItsMember(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    bool
		wantErr bool
	}{
		{give: `{"activated":true}`, want: true},
		{give: `{"activated":false}`},
		{give: `{}`, wantErr: true},
		{give: `null`, wantErr: true},
		{give: `{"activated":"yes"}`, wantErr: true},
	}
	for _, tt := range tests {
		var s identityapi.ActivationState
		err := json.Unmarshal([]byte(tt.give), &s)
		assert.Equal(t, tt.wantErr, err != nil, "%s: %v", tt.give, err)
		assert.Equal(t, tt.want, s.Activated, tt.give)
	}
}

func TestPaths(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/internal/v1/teams/a%20team", identityapi.TeamPath("a team"))
	assert.Equal(t, "/internal/v1/teams/infra/run-context", identityapi.RunContextPath("infra"))
	assert.Equal(t, "/internal/v1/teams/a%20team/approver-groups", identityapi.ApproverGroupsPath("a team"))
}

// fakeIdentity answers each path from a table, checking that every request is signed by
// the calling service.
func fakeIdentity(t *testing.T, signer *auth.Signer, self auth.Principal, answers map[string]func(w http.ResponseWriter, r *http.Request)) *identityapi.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		answer, ok := answers[r.Method+" "+r.URL.EscapedPath()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"ROUTE_NOT_FOUND"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		answer(w, r)
	}))
	t.Cleanup(srv.Close)
	return identityapi.New(registry.NewStatic(map[string][]string{identityapi.Service: {srv.URL}}), signer, self)
}

func reply(status int, body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

func newSigner(t *testing.T) *auth.Signer {
	t.Helper()
	s, err := auth.NewSigner([]byte("identityapi-test-key-0123456789a"))
	require.NoError(t, err)
	return s
}

func TestTeam(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"GET /internal/v1/teams/infra":  reply(200, `{"id":"t-1","name":"infra","displayName":"Infra","creationDate":"2026-11-25T10:00:00Z"}`),
		"GET /internal/v1/teams/gone":   reply(404, `{"reason":"TEAM_NOT_FOUND"}`),
		"GET /internal/v1/teams/broken": reply(500, `{}`),
	})
	got, err := c.Team(t.Context(), "infra")
	require.NoError(t, err)
	assert.Equal(t, identityapi.Team{ID: "t-1", Name: "infra", DisplayName: "Infra",
		CreationDate: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}, got)
	_, err = c.Team(t.Context(), "gone")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	_, err = c.Team(t.Context(), "broken")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestRunContext(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"GET /internal/v1/teams/infra/run-context": reply(200, `{"team":"infra","globalParams":{"a":"1"},"teamParams":{},
			"secrets":[],"quotas":{"maxWorkflowRunMonthly":7,"maxWorkflowRunDuration":60,"maxConcurrentRuns":2,"maxWorkflowRunStorage":1},
			"taskDefaultTimeout":30,"preventSelfApproval":false,"maxDepth":4,"maxTreeRuns":50}`),
		"GET /internal/v1/teams/gone/run-context":   reply(404, `{"reason":"TEAM_NOT_FOUND","message":"Team 'gone' was not found."}`),
		"GET /internal/v1/teams/broken/run-context": reply(503, `{"reason":"DEPENDENCY_UNAVAILABLE"}`),
	})
	got, err := c.RunContext(t.Context(), "infra")
	require.NoError(t, err)
	assert.Equal(t, identityapi.RunContext{Team: "infra", GlobalParams: map[string]any{"a": "1"}, TeamParams: map[string]any{},
		Secrets: []string{}, Quotas: identityapi.RunQuotas{MaxWorkflowRunMonthly: 7, MaxWorkflowRunDuration: 60,
			MaxConcurrentRuns: 2, MaxWorkflowRunStorage: 1}, TaskDefaultTimeout: 30, MaxDepth: 4, MaxTreeRuns: 50}, got)
	_, err = c.RunContext(t.Context(), "gone")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	_, err = c.RunContext(t.Context(), "broken")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestApproverGroups(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"GET /internal/v1/teams/infra/approver-groups": reply(200, `{"team":"infra","groups":[
			{"id":"g1","name":"leads","approvers":["u1","u2"]},{"id":"g2","name":"ops","approvers":[]}]}`),
		"GET /internal/v1/teams/gone/approver-groups":   reply(404, `{"reason":"TEAM_NOT_FOUND","message":"Team 'gone' was not found."}`),
		"GET /internal/v1/teams/broken/approver-groups": reply(503, `{"reason":"DEPENDENCY_UNAVAILABLE"}`),
	})
	got, err := c.ApproverGroups(t.Context(), "infra")
	require.NoError(t, err)
	assert.Equal(t, identityapi.ApproverGroups{Team: "infra", Groups: []identityapi.ApproverGroup{
		{ID: "g1", Name: "leads", Approvers: []string{"u1", "u2"}}, {ID: "g2", Name: "ops", Approvers: []string{}},
	}}, got)
	_, err = c.ApproverGroups(t.Context(), "gone")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	_, err = c.ApproverGroups(t.Context(), "broken")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestWorkflowContext(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"GET /internal/v1/teams/infra/workflow-context":  reply(200, `{"team":"infra","paramNames":["db","zone"],"maxWorkflowCount":12}`),
		"GET /internal/v1/teams/gone/workflow-context":   reply(404, `{"reason":"TEAM_NOT_FOUND","message":"Team 'gone' was not found."}`),
		"GET /internal/v1/teams/broken/workflow-context": reply(503, `{"reason":"DEPENDENCY_UNAVAILABLE"}`),
	})
	got, err := c.WorkflowContext(t.Context(), "infra")
	require.NoError(t, err)
	assert.Equal(t, identityapi.WorkflowContext{Team: "infra", ParamNames: []string{"db", "zone"}, MaxWorkflowCount: 12}, got)
	_, err = c.WorkflowContext(t.Context(), "gone")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	_, err = c.WorkflowContext(t.Context(), "broken")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestGlobalParametersAndActivation(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"GET /internal/v1/parameters": reply(200, `{"names":["region","token"]}`),
		"GET /internal/v1/activation": reply(200, `{"activated":true}`),
	})
	got, err := c.GlobalParameters(t.Context())
	require.NoError(t, err)
	assert.Equal(t, []string{"region", "token"}, got.Names)
	on, err := c.Activated(t.Context())
	require.NoError(t, err)
	assert.True(t, on)

	down := identityapi.New(registry.NewStatic(nil), signer, self)
	_, err = down.GlobalParameters(t.Context())
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
	_, err = down.Activated(t.Context())
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "gateway", Name: "gateway"}
	ada := auth.Principal{Type: auth.TypeUser, ID: "u-1", Name: "Ada"}
	expires := "2026-11-25T10:00:00Z"
	c := fakeIdentity(t, signer, self, map[string]func(http.ResponseWriter, *http.Request){
		"POST /internal/v1/authenticate": func(w http.ResponseWriter, r *http.Request) {
			var req identityapi.AuthenticateRequest
			assert.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			switch req.Token {
			case "btu_good":
				w.Header().Set(identityapi.HeaderTokenExpires, expires)
				_ = json.NewEncoder(w).Encode(ada)
			case "btu_odd":
				w.Header().Set(identityapi.HeaderTokenExpires, "tomorrow")
				_ = json.NewEncoder(w).Encode(ada)
			case "btu_failing":
				w.WriteHeader(http.StatusInternalServerError)
			default:
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(`{"reason":"UNAUTHENTICATED","message":"The credential is not valid."}`))
			}
		},
	})
	got, err := c.Authenticate(t.Context(), identityapi.AuthenticateRequest{Token: "btu_good"})
	require.NoError(t, err)
	assert.Equal(t, ada, got.Principal)
	require.NotNil(t, got.Expires)
	assert.Equal(t, time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), *got.Expires)

	tests := []struct {
		give string
		want apperr.Reason
	}{
		{"btu_bad", apperr.Unauthenticated},
		{"btu_odd", apperr.DependencyUnavailable},
		{"btu_failing", apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		_, err := c.Authenticate(t.Context(), identityapi.AuthenticateRequest{Token: tt.give})
		assert.True(t, apperr.HasReason(err, tt.want), "%s: %v", tt.give, err)
	}
}
