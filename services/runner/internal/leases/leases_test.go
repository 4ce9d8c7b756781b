package leases

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/services/runner/internal/worker"
)

// answer is what the fake runs service replies.
type answer struct {
	status int
	body   string
}

// serve starts a fake runs service that checks each request and answers a.
func serve(t *testing.T, signer *auth.Signer, wantPath string, a answer) registry.Resolver {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, http.MethodPost, r.Method)
		assert.Equal(t, wantPath, r.URL.EscapedPath())
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, Self, p)
		var body map[string]any
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&body))
		assert.Equal(t, map[string]any{"attempt": 3.0, "runner": "runner-1"}, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(srv.Close)
	return registry.NewStatic(map[string][]string{runsapi.Service: {srv.URL}})
}

func newSigner(t *testing.T) *auth.Signer {
	t.Helper()
	s, err := auth.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	return s
}

func TestClaim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    answer
		want    bool
		wantErr bool
	}{
		{name: "claimed", give: answer{200, `{"claimed":true}`}, want: true},
		{name: "not claimed", give: answer{200, `{"claimed":false}`}},
		{name: "someone else's or cancelled", give: answer{409, `{"reason":"WORKFLOWRUN_INVALID_PHASE"}`}},
		{name: "task run gone", give: answer{404, `{"reason":"TASKRUN_NOT_FOUND"}`}},
		{name: "endpoint missing", give: answer{404, `{"reason":"ROUTE_NOT_FOUND"}`}, wantErr: true},
		{name: "failing", give: answer{503, `{"reason":"DEPENDENCY_UNAVAILABLE"}`}, wantErr: true},
		{name: "garbled", give: answer{200, `{`}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer := newSigner(t)
			r := NewRuns(serve(t, signer, "/internal/v1/taskruns/tr%2F1/claim", tt.give), signer, "runner-1")
			got, err := r.Claim(t.Context(), "tr/1", 3)
			assert.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestHeartbeat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    answer
		want    worker.Beat
		wantErr bool
	}{
		{name: "continue", give: answer{200, `{"cancel":false}`}, want: worker.Continue},
		{name: "cancel", give: answer{200, `{"cancel":true}`}, want: worker.Cancel},
		{name: "taken over", give: answer{409, `{}`}, want: worker.Lost},
		{name: "gone", give: answer{404, `{"reason":"TASKRUN_NOT_FOUND"}`}, want: worker.Lost},
		{name: "failing", give: answer{500, ``}, want: worker.Continue, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			signer := newSigner(t)
			r := NewRuns(serve(t, signer, "/internal/v1/taskruns/tr1/heartbeat", tt.give), signer, "runner-1")
			got, err := r.Heartbeat(t.Context(), "tr1", 3, "runner-1")
			assert.Equal(t, tt.wantErr, err != nil, "err: %v", err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	signer := newSigner(t)
	_, err := NewRuns(registry.NewStatic(nil), signer, "runner-1").Claim(t.Context(), "tr1", 1)
	assert.ErrorIs(t, err, registry.ErrNoInstance)

	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err = NewRuns(registry.NewStatic(map[string][]string{runsapi.Service: {srv.URL}}), signer, "runner-1").Claim(t.Context(), "tr1", 1)
	require.Error(t, err)
	assert.False(t, errors.Is(err, registry.ErrNoInstance))
}
