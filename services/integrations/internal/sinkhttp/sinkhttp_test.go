package sinkhttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/integrations/internal/sinkhttp"
)

func body(t *testing.T) []byte {
	t.Helper()
	e, err := events.New("r1/running/running", events.Source("runs"), events.TypeStatusWorkflowRun,
		"/workflowrun/r1/status/running", events.WorkflowRun{ID: "r1", Status: "running"})
	require.NoError(t, err)
	b, err := events.Marshal(e)
	require.NoError(t, err)
	return b
}

func TestSendStructured(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(raw)))
		got <- r
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	s, err := sinkhttp.New()
	require.NoError(t, err)
	require.NoError(t, s.Send(context.Background(), srv.URL+"/in?token=x", body(t)))
	r := <-got
	assert.Equal(t, "/in", r.URL.Path)
	assert.Equal(t, "x", r.URL.Query().Get("token"))
	assert.Equal(t, events.ContentType, r.Header.Get("Content-Type"))
	e, err := cehttp.NewEventFromHTTPRequest(r)
	require.NoError(t, err)
	assert.Equal(t, "r1/running/running", e.ID())
	assert.Equal(t, events.TypeStatusWorkflowRun, e.Type())
	assert.Equal(t, "/workflowrun/r1/status/running", e.Subject())
	assert.Equal(t, events.Source("runs"), e.Source())
}

func TestSendFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/huge":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(strings.Repeat("x", 1<<20)))
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	s, err := sinkhttp.New()
	require.NoError(t, err)
	tests := []struct{ name, sink, want string }{
		{"5xx", srv.URL + "/?token=secret", "the sink answered 503"},
		{"huge answer", srv.URL + "/huge?token=secret", "the sink answered 500"},
		{"redirect", srv.URL + "/moved?token=secret", "the sink answered 307"},
		{"refused", "http://" + testkit.ClosedAddr(t) + "/?token=secret", "post to the sink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Send(context.Background(), tt.sink, body(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.NotContains(t, err.Error(), "secret", "the sink's URL stays out of errors")
			assert.Less(t, len(err.Error()), 64<<10)
		})
	}
}
