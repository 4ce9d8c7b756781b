package standalone_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
)

// sink is an HTTP sink of status events: it reads each request with the CloudEvents SDK,
// keeps the events it accepted in order of arrival, and answers 500 while down.
type sink struct {
	srv  *httptest.Server
	down atomic.Bool
	// refused counts the requests answered 500.
	refused atomic.Int64

	mu  sync.Mutex
	got []received
}

type received struct {
	event.Event
	// raw is the request's body as sent.
	raw string
	at  time.Time
}

func newSink(t testing.TB) *sink {
	t.Helper()
	s := &sink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		if s.down.Load() {
			s.refused.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		e, err := cehttp.NewEventFromHTTPRequest(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		raw, _ := json.Marshal(e)
		s.mu.Lock()
		s.got = append(s.got, received{Event: *e, raw: string(raw), at: at})
		s.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// ofRun answers the events of run the sink accepted, in order of arrival.
func (s *sink) ofRun(run string) []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []received
	for _, r := range s.got {
		if strings.HasPrefix(r.Subject(), "/workflowrun/"+run+"/") {
			out = append(out, r)
		}
	}
	return out
}

func (s *sink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// putSinks sets the event sinks of settings as the admin.
func (b *baton) putSinks(t *testing.T, urls ...string) {
	t.Helper()
	body := fmt.Sprintf(`[{"key":"events","config":[{"key":"sinks","value":%q}]}]`, strings.Join(urls, ","))
	var out []any
	code := b.callJSON(t, http.MethodPut, "/api/v2/settings", b.token, body, &out)
	require.Equal(t, http.StatusOK, code, out)
}

// finalEvent reports whether r is the run's status event of its completion.
func finalEvent(r received) bool {
	return r.Type() == events.TypeStatusWorkflowRun && strings.HasSuffix(r.ID(), "/completed")
}

// ids answers the event ids of rs.
func ids(rs []received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID()
	}
	return out
}

// Status events through the whole system: a run with a password param is delivered to
// two sinks of settings as CloudEvents, its and its task runs' status changes in the order
// they happened, the password masked; one sink answers 500 meanwhile, the process is
// stopped and started again on its data, and that sink, back up, still gets every event,
// in the same order as the other.
func TestIntegrationDeliveryToSinks(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-delivery-secret"
	vars := map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"}
	b := start(t, vars)
	healthy, flaky := newSink(t), newSink(t)
	b.putSinks(t, healthy.srv.URL+"/events", flaky.srv.URL+"/in?token=sink-token")

	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"out"}`)
	require.Equal(t, http.StatusCreated, code, out)
	wf := `{"name":"notify","params":[{"name":"pw","type":"password"},{"name":"who","type":"text"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"mark","type":"script","params":[{"name":"script","value":"true"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"mark"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/out/workflow", b.token, wf)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	submit := func(params string) string {
		code, run := b.call(t, http.MethodPost, "/api/v2/team/out/workflow/notify/submit?start=true", b.token, `{"params":`+params+`}`)
		require.Equal(t, http.StatusCreated, code, run)
		return run["id"].(string)
	}
	// The sinks reach the service within its settings cache's life: runs before are not
	// delivered, so run until one is.
	require.Eventually(t, func() bool {
		if healthy.count() > 0 && flaky.count() > 0 {
			return true
		}
		submit(`{"who":"warm-up"}`)
		return false
	}, 30*time.Second, 500*time.Millisecond)

	flaky.down.Store(true)
	run := submit(fmt.Sprintf(`{"pw":%q,"who":"ada"}`, secret))
	require.Eventually(t, func() bool {
		got := healthy.ofRun(run)
		return len(got) > 0 && finalEvent(got[len(got)-1])
	}, 30*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return flaky.refused.Load() >= 3 }, 30*time.Second, 20*time.Millisecond, "the flaky sink is tried again")
	assert.Empty(t, flaky.ofRun(run))

	got := healthy.ofRun(run)
	var runs, tasks int
	for i, r := range got {
		assert.Equal(t, events.Source("runs"), r.Source())
		assert.False(t, r.Time().IsZero())
		if i > 0 {
			assert.False(t, r.Time().Before(got[i-1].Time()), "%s arrived after %s but happened before it", r.ID(), got[i-1].ID())
		}
		assert.NotContains(t, r.raw, secret)
		switch r.Type() {
		case events.TypeStatusWorkflowRun:
			runs++
			v, err := events.Decode[events.WorkflowRun](r.Event)
			require.NoError(t, err)
			assert.Equal(t, run, v.ID)
			assert.Equal(t, "/workflowrun/"+run+"/status/"+v.Status, r.Subject())
			params := map[string]any{}
			for _, p := range v.Params {
				params[p.Name] = p.Value
			}
			assert.Equal(t, map[string]any{"pw": "********", "who": "ada"}, params, "secrets masked")
		case events.TypeStatusTaskRun:
			tasks++
			v, err := events.Decode[events.TaskRun](r.Event)
			require.NoError(t, err)
			assert.Equal(t, run, v.WorkflowRunRef)
			assert.Equal(t, "/workflowrun/"+run+"/taskrun/"+v.ID+"/status/"+v.Status, r.Subject())
		default:
			t.Errorf("unexpected event type %s", r.Type())
		}
	}
	assert.GreaterOrEqual(t, runs, 2, "the run's start and end: %v", ids(got))
	assert.GreaterOrEqual(t, tasks, 4, "the script's start, each task's end: %v", ids(got))
	assert.Len(t, uniq(ids(got)), len(got), "no event twice: %v", ids(got))

	// Stopped with the flaky sink's events owed, started again on the same data: the
	// delivery state was in the database.
	require.NoError(t, b.stop())
	flaky.down.Store(false)
	start(t, vars)
	require.Eventually(t, func() bool { return len(flaky.ofRun(run)) >= len(got) }, 60*time.Second, 20*time.Millisecond)
	assert.Equal(t, ids(got), ids(flaky.ofRun(run)), "the same events in the same order")
	for _, r := range flaky.ofRun(run) {
		assert.NotContains(t, r.raw, secret)
	}
}

func uniq(ss []string) map[string]bool {
	out := map[string]bool{}
	for _, s := range ss {
		out[s] = true
	}
	return out
}
