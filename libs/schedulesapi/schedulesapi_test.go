package schedulesapi_test

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
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/schedulesapi"
)

var at = time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)

func goldenCases() []golden.Case {
	return []golden.Case{
		{Name: "createschedule", Value: schedulesapi.CreateSchedule{Key: "0197a5c4-7a8e-7c3b-9d2f-4a1e5b6c7d8e.3",
			WorkflowRef: "nightly", Name: "later", Description: "Scheduled by task 'later' of run 0197a5c4-7a8e-7c3b-9d2f-4a1e5b6c7d8e.",
			Date: at, Timezone: "Europe/Paris", Params: map[string]any{"env": "prod", "token": "s3cret"}, Secret: []string{"token"},
			Labels:    map[string]string{"from": "release"},
			CreatedBy: schedulesapi.Initiator{Type: "user", ID: "6650c0ffee00000000000a01", Name: "Ada", Person: "6650c0ffee00000000000a01"}}},
		{Name: "createdschedule", Value: schedulesapi.CreatedSchedule{ID: "3f1c9a7e5b2d4c6a8e0f1a2b", Date: at, TriggerDisabled: true, Created: true}},
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

func TestCreateSchedulePath(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "/internal/v1/teams/a%20team/schedules", schedulesapi.CreateSchedulePath("a team"))
	assert.Equal(t, schedulesapi.Prefix+schedulesapi.CreateScheduleRoute, "/internal/v1/teams/:team/schedules")
}

// The client against a fake schedules service: the request signed as the calling service
// and sent as the contract says, a 200 read, a refusal of the request returned as its own
// client error, and everything else as the service being unavailable.
func TestCreateSchedule(t *testing.T) {
	t.Parallel()
	self := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	req := goldenCases()[0].Value.(schedulesapi.CreateSchedule)
	tests := []struct {
		name       string
		status     int
		body       string
		want       schedulesapi.CreatedSchedule
		wantReason apperr.Reason
	}{
		{name: "made", status: 200, body: `{"id":"s1","date":"2025-03-14T15:00:00Z","created":true}`,
			want: schedulesapi.CreatedSchedule{ID: "s1", Date: at, Created: true}},
		{name: "made before", status: 200, body: `{"id":"s1","date":"2025-03-14T15:00:00Z","triggerDisabled":true,"created":false}`,
			want: schedulesapi.CreatedSchedule{ID: "s1", Date: at, TriggerDisabled: true}},
		{name: "no such workflow", status: 404, body: `{"reason":"WORKFLOW_NOT_FOUND","message":"Workflow 'nightly' was not found."}`,
			wantReason: apperr.WorkflowNotFound},
		{name: "in the past", status: 400, body: `{"reason":"SCHEDULE_INVALID_RUNONCE","message":"dateSchedule is in the past."}`,
			wantReason: apperr.ScheduleInvalidRunOnce},
		{name: "endpoint missing", status: 404, body: `{"reason":"ROUTE_NOT_FOUND"}`, wantReason: apperr.DependencyUnavailable},
		{name: "credentials refused", status: 403, body: `{"reason":"PERMISSION_DENIED"}`, wantReason: apperr.DependencyUnavailable},
		{name: "failing", status: 500, body: `{"reason":"INTERNAL"}`, wantReason: apperr.DependencyUnavailable},
		{name: "down", status: 503, body: `{"reason":"DEPENDENCY_UNAVAILABLE"}`, wantReason: apperr.DependencyUnavailable},
		{name: "garbled", status: 200, body: `{`, wantReason: apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer, err := auth.NewSigner([]byte("schedulesapi-test-key-0123456789ab"))
			require.NoError(t, err)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
				assert.NoError(t, err)
				assert.Equal(t, self, p, "signed as the calling service")
				assert.Equal(t, "POST /internal/v1/teams/ops/schedules", r.Method+" "+r.URL.EscapedPath())
				var got schedulesapi.CreateSchedule
				assert.NoError(t, json.NewDecoder(r.Body).Decode(&got))
				assert.Equal(t, req, got)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			c := schedulesapi.New(registry.NewStatic(map[string][]string{schedulesapi.Service: {srv.URL}}), signer, self)

			got, err := c.CreateSchedule(t.Context(), "ops", req)
			if tt.wantReason.Name != "" {
				assert.True(t, apperr.HasReason(err, tt.wantReason), "want %s, got %v", tt.wantReason.Name, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// No instance of the schedules service is as good as one that is down.
func TestCreateScheduleWithoutInstance(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("schedulesapi-test-key-0123456789ab"))
	require.NoError(t, err)
	c := schedulesapi.New(registry.NewStatic(nil), signer, auth.Principal{Type: auth.TypeService, ID: "runs"})
	_, err = c.CreateSchedule(t.Context(), "ops", schedulesapi.CreateSchedule{Key: "k"})
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}
