package runsapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/golden"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
)

func goldenCases() []golden.Case {
	return []golden.Case{
		{Name: "attempt", Value: runsapi.AttemptRequest{Attempt: 2, Runner: "runner-7f9c"}},
		{Name: "claim", Value: runsapi.ClaimAnswer{Claimed: true}},
		{Name: "heartbeat", Value: runsapi.HeartbeatAnswer{Cancel: true}},
		{Name: "activeruns", Value: runsapi.ActiveRuns{Active: 3}},
		{Name: "activeruns.cancel", Value: runsapi.CancelledRuns{Cancelled: 3}},
		{Name: "usage", Value: runsapi.Usage{CurrentRuns: 120, CurrentConcurrentRuns: 4, CurrentRunTotalDuration: 3_600_000,
			CurrentRunMedianDuration: 25_000, MonthlyResetDate: time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)}},
		{Name: "submitrun", Value: runsapi.SubmitRun{Params: map[string]any{"env": "prod", "count": 3.0, "key": "s3cret"}, Secret: []string{"key"},
			Labels: map[string]string{"team": "release"}, Trigger: "schedule", IdempotencyKey: "6650c0ffee00000000000c01@2025-03-14T15:00:00Z",
			InitiatedBy: runsapi.Initiator{Type: "schedule", ID: "6650c0ffee00000000000c01", Name: "nightly", Person: "6650c0ffee00000000000a01"}}},
		{Name: "submittedrun", Value: runsapi.SubmittedRun{RunState: runsapi.RunState{ID: "6650c0ffee00000000000b01", Status: "running", Phase: "running"}, Created: true}},
		{Name: "runstate", Value: runsapi.RunState{ID: "6650c0ffee00000000000b01", Status: "succeeded", Phase: "completed"}},
		{Name: "cancelrun", Value: runsapi.CancelRun{Reason: "cancelled by schedule nightly: a newer fire"}},
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

func newSigner(t *testing.T) *auth.Signer {
	t.Helper()
	s, err := auth.NewSigner([]byte("runsapi-test-key-0123456789abcdef"))
	require.NoError(t, err)
	return s
}

// answer is what the fake runs service replies.
type answer struct {
	status int
	body   string
}

func TestAttempts(t *testing.T) {
	t.Parallel()
	self := auth.Principal{Type: auth.TypeService, ID: "runner", Name: "runner"}
	tests := []struct {
		name     string
		give     answer
		want     bool
		wantLost bool
		wantErr  bool
	}{
		{name: "yes", give: answer{200, `{"claimed":true,"cancel":true}`}, want: true},
		{name: "no", give: answer{200, `{"claimed":false,"cancel":false}`}},
		{name: "someone else's or cancelled", give: answer{409, `{"reason":"WORKFLOWRUN_INVALID_PHASE"}`}, wantLost: true},
		{name: "taken over, no body", give: answer{409, `{}`}, wantLost: true},
		{name: "task run gone", give: answer{404, `{"reason":"TASKRUN_NOT_FOUND"}`}, wantLost: true},
		{name: "endpoint missing", give: answer{404, `{"reason":"ROUTE_NOT_FOUND"}`}, wantErr: true},
		{name: "failing", give: answer{503, `{"reason":"DEPENDENCY_UNAVAILABLE"}`}, wantErr: true},
		{name: "garbled", give: answer{200, `{`}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer := newSigner(t)
			var seen []string
			var mu sync.Mutex
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
				assert.NoError(t, err)
				assert.Equal(t, self, p)
				body, _ := json.Marshal(json.RawMessage(mustRead(t, r)))
				mu.Lock()
				seen = append(seen, r.Method+" "+r.URL.EscapedPath()+" "+string(body))
				mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.give.status)
				_, _ = w.Write([]byte(tt.give.body))
			}))
			t.Cleanup(srv.Close)
			c := runsapi.New(registry.NewStatic(map[string][]string{runsapi.Service: {srv.URL}}), signer, self)
			req := runsapi.AttemptRequest{Attempt: 3, Runner: "runner-1"}

			claim, err := c.Claim(t.Context(), "tr/1", req)
			beat, err2 := c.Heartbeat(t.Context(), "tr/1", req)
			for _, err := range []error{err, err2} {
				assert.Equal(t, tt.wantLost, errors.Is(err, runsapi.ErrAttemptLost), "%v", err)
				assert.Equal(t, tt.wantErr || tt.wantLost, err != nil, "%v", err)
			}
			assert.Equal(t, tt.want, claim.Claimed)
			assert.Equal(t, tt.want, beat.Cancel)
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, []string{
				`POST /internal/v1/taskruns/tr%2F1/claim {"attempt":3,"runner":"runner-1"}`,
				`POST /internal/v1/taskruns/tr%2F1/heartbeat {"attempt":3,"runner":"runner-1"}`,
			}, seen)
		})
	}
}

func mustRead(t *testing.T, r *http.Request) []byte {
	t.Helper()
	var b bytes.Buffer
	_, err := b.ReadFrom(r.Body)
	require.NoError(t, err)
	return b.Bytes()
}

func TestActiveRuns(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	var mu sync.Mutex
	var seen []string
	status := http.StatusOK
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		code := status
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"active": 2, "cancelled": 2}`))
	}))
	t.Cleanup(srv.Close)
	c := runsapi.New(registry.NewStatic(map[string][]string{runsapi.Service: {srv.URL}}), signer, self)

	n, err := c.CountActiveRuns(t.Context(), "infra", "build")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	n, err = c.CancelActiveRuns(t.Context(), "infra", "")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	mu.Lock()
	assert.Equal(t, []string{"GET /internal/v1/teams/infra/activeruns?workflow=build", "POST /internal/v1/teams/infra/activeruns/cancel"}, seen)
	status = http.StatusInternalServerError
	mu.Unlock()
	_, err = c.CountActiveRuns(t.Context(), "infra", "")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "a runs service that fails makes the delete wait: %v", err)
	_, err = c.CancelActiveRuns(t.Context(), "infra", "")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestUsage(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	self := auth.Principal{Type: auth.TypeService, ID: "identity", Name: "identity"}
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		assert.Equal(t, "GET /internal/v1/teams/a%20team/usage", r.Method+" "+r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"currentRuns": 7, "currentConcurrentRuns": 2, "currentRunTotalDuration": 9000,
			"currentRunMedianDuration": 1500, "monthlyResetDate": "2026-12-01T00:00:00Z"}`))
	}))
	t.Cleanup(srv.Close)
	c := runsapi.New(registry.NewStatic(map[string][]string{runsapi.Service: {srv.URL}}), signer, self)

	u, err := c.Usage(t.Context(), "a team")
	require.NoError(t, err)
	assert.Equal(t, runsapi.Usage{CurrentRuns: 7, CurrentConcurrentRuns: 2, CurrentRunTotalDuration: 9000,
		CurrentRunMedianDuration: 1500, MonthlyResetDate: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, u)

	status.Store(http.StatusInternalServerError)
	_, err = c.Usage(t.Context(), "a team")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestMonthStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give, want time.Time
	}{
		{time.Date(2026, 11, 25, 15, 4, 5, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runsapi.MonthStart(tt.give))
	}
}
