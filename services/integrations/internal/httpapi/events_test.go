package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// stubRuns makes one run per idempotency key (every submit without one).
type stubRuns struct {
	mu    sync.Mutex
	runs  map[string]*events.WorkflowRun
	specs []runsapi.SubmitRun
}

func (r *stubRuns) Submit(_ context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.specs = append(r.specs, req)
	if run, ok := r.runs[req.IdempotencyKey]; ok && req.IdempotencyKey != "" {
		return runsapi.SubmittedRun{Run: run}, nil
	}
	run := &events.WorkflowRun{ID: fmt.Sprint("r", len(r.specs)), Team: team, WorkflowRef: workflow, Trigger: req.Trigger}
	r.runs[cmpOr(req.IdempotencyKey, run.ID)] = run
	return runsapi.SubmittedRun{Run: run, Created: true}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// stubWorkflows turns every trigger of team ops on.
type stubWorkflows struct{}

func (stubWorkflows) Triggers(_ context.Context, team, _, workflow string) (workflowsapi.TriggeredWorkflows, error) {
	if team != "ops" {
		return workflowsapi.TriggeredWorkflows{}, apperr.New(apperr.TeamNotFound, "no team %s", team)
	}
	return workflowsapi.TriggeredWorkflows{Workflows: []workflowsapi.TriggeredWorkflow{{Name: workflow, Trigger: workflowsapi.Trigger{Enabled: true}}}}, nil
}

type memRecords struct {
	mu   sync.Mutex
	recs map[string]app.Receipt
}

func (m *memRecords) FindReceipt(_ context.Context, key string, _ time.Time) (app.Receipt, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.recs[key]
	return d, ok, nil
}

func (m *memRecords) CreateReceipt(_ context.Context, d app.Receipt, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.recs[d.Key]; !ok {
		m.recs[d.Key] = d
	}
	return nil
}

// headerAs names the principal of a test request: "" for an admin, "anonymous" for none.
const headerAs = "X-Test-As"

func newApp(t *testing.T) (*fiber.App, *stubRuns) {
	t.Helper()
	runs := &stubRuns{runs: map[string]*events.WorkflowRun{}}
	evs := app.NewEvents(runs, app.NewTriggerCache(stubWorkflows{}, time.Second, time.Now), &memRecords{recs: map[string]app.Receipt{}}, time.Now, nil)
	a := httpx.NewApp(httpx.Config{Name: "test", NoTracing: true})
	a.Use(func(c *fiber.Ctx) error {
		p := auth.Principal{Type: auth.TypeUser, ID: "u1", Roles: []string{"admin"}}
		if c.Get(headerAs) == "anonymous" {
			p = auth.Anonymous
		}
		c.SetUserContext(auth.WithPrincipal(c.UserContext(), p))
		return c.Next()
	})
	Routes(a.Group("/api/v2"), Areas{Events: evs, Now: time.Now})
	return a, runs
}

func sdkEvent(id, subject string, data any) event.Event {
	e := event.New()
	e.SetID(id)
	e.SetSource("/tests")
	e.SetType("com.example.test")
	e.SetSubject(subject)
	if data != nil {
		if err := e.SetData(event.ApplicationJSON, data); err != nil {
			panic(err)
		}
	}
	return e
}

func do(t *testing.T, a *fiber.App, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := a.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(raw), resp.Header
}

func raw(method, target, ct, body string, headers ...string) *http.Request {
	req, _ := http.NewRequest(method, target, strings.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func TestEventModes(t *testing.T) {
	t.Parallel()
	const target = "http://baton/api/v2/event"
	structured := func(e event.Event) *http.Request {
		req, err := cehttp.NewHTTPRequestFromEvent(binding.WithForceStructured(context.Background()), target, e)
		require.NoError(t, err)
		return req
	}
	binary := func(e event.Event) *http.Request {
		req, err := cehttp.NewHTTPRequestFromEvent(context.Background(), target, e)
		require.NoError(t, err)
		return req
	}
	batch := func(evs ...event.Event) *http.Request {
		req, err := cehttp.NewHTTPRequestFromEvents(context.Background(), target, evs)
		require.NoError(t, err)
		return req
	}
	deep := strings.Repeat(`{"a":`, 70) + "1" + strings.Repeat("}", 70)
	big := make([]event.Event, app.MaxBatch+1)
	for i := range big {
		big[i] = sdkEvent(fmt.Sprint(i), "ops/build", nil)
	}
	tests := []struct {
		name     string
		req      func() *http.Request
		want     int
		wantRuns int
		wantData any
	}{
		{name: "structured", req: func() *http.Request { return structured(sdkEvent("1", "ops/build", map[string]any{"k": "v"})) },
			want: 201, wantRuns: 1, wantData: map[string]any{"k": "v"}},
		{name: "binary", req: func() *http.Request { return binary(sdkEvent("1", "ops/build", map[string]any{"k": "v"})) },
			want: 201, wantRuns: 1, wantData: map[string]any{"k": "v"}},
		{name: "binary, text data", req: func() *http.Request {
			r := raw("POST", target, "text/plain", "hello", "ce-specversion", "1.0", "ce-id", "t", "ce-source", "/s", "ce-type", "x", "ce-subject", "ops/build")
			return r
		}, want: 201, wantRuns: 1, wantData: "hello"},
		{name: "binary, no data", req: func() *http.Request {
			return raw("POST", target, "", "", "ce-specversion", "1.0", "ce-id", "n", "ce-source", "/s", "ce-type", "x", "ce-subject", "ops/build")
		}, want: 201, wantRuns: 1},
		{name: "JSON with specversion", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/json", `{"specversion":"1.0","id":"j","source":"/s","type":"x","data":{"k":"v"}}`)
		}, want: 201, wantRuns: 1, wantData: map[string]any{"k": "v"}},
		{name: "batch", req: func() *http.Request {
			return batch(sdkEvent("1", "ops/build", nil), sdkEvent("2", "ops/other", nil))
		}, want: 201, wantRuns: 2},
		{name: "plain JSON", req: func() *http.Request { return raw("POST", target+"?ref=ops/build", "application/json", `{"k":"v"}`) }, want: 400},
		{name: "no body", req: func() *http.Request { return raw("POST", target+"?ref=ops/build", "application/json", "") }, want: 400},
		{name: "text, no ce headers", req: func() *http.Request { return raw("POST", target+"?ref=ops/build", "text/plain", "hi") }, want: 415},
		{name: "malformed structured", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"1.0","id":`)
		}, want: 400},
		{name: "structured without id", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"1.0","source":"/s","type":"x"}`)
		}, want: 400},
		{name: "structured of spec 2.0", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"2.0","id":"1","source":"/s","type":"x"}`)
		}, want: 400},
		{name: "binary of spec 2.0", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "", "", "ce-specversion", "2.0", "ce-id", "1", "ce-source", "/s", "ce-type", "x")
		}, want: 400},
		{name: "binary without a source", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "", "", "ce-specversion", "1.0", "ce-id", "1", "ce-type", "x")
		}, want: 400},
		{name: "deep data", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"1.0","id":"1","source":"/s","type":"x","data":`+deep+`}`)
		}, want: 400},
		{name: "deep binary data", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/json", deep, "ce-specversion", "1.0", "ce-id", "1", "ce-source", "/s", "ce-type", "x")
		}, want: 400},
		{name: "binary JSON data that is not", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/json", "{nope", "ce-specversion", "1.0", "ce-id", "1", "ce-source", "/s", "ce-type", "x")
		}, want: 400},
		{name: "a batch that is not a list", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents-batch+json", `{"specversion":"1.0"}`)
		}, want: 400},
		{name: "an empty batch", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents-batch+json", `[]`)
		}, want: 400},
		{name: "a batch too big", req: func() *http.Request { return batch(big...) }, want: 413},
		{name: "a batch with an invalid event", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents-batch+json",
				`[{"specversion":"1.0","id":"1","source":"/s","type":"x"},{"specversion":"1.0","source":"/s","type":"x"}]`)
		}, want: 400},
		{name: "NUL in the ref", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/b%00uild", "application/cloudevents+json", `{"specversion":"1.0","id":"1","source":"/s","type":"x"}`)
		}, want: 400},
		{name: "NUL in the id", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"1.0","id":"a\u0000b","source":"/s","type":"x"}`)
		}, want: 201, wantRuns: 1},
		{name: "no credentials", req: func() *http.Request {
			return raw("POST", target+"?ref=ops/build", "application/cloudevents+json", `{"specversion":"1.0","id":"1","source":"/s","type":"x"}`, headerAs, "anonymous")
		}, want: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, runs := newApp(t)
			code, body, hdr := do(t, a, tt.req())
			require.Equal(t, tt.want, code, body)
			assert.Len(t, runs.specs, tt.wantRuns)
			if code >= 400 {
				var e struct{ Reason string }
				require.NoError(t, json.Unmarshal([]byte(body), &e), body)
				assert.NotEmpty(t, e.Reason)
				t.Log(body)
				return
			}
			if tt.wantRuns == 1 {
				assert.Equal(t, "/api/v2/team/ops/workflowrun/r1", hdr.Get("Location"))
				assert.Equal(t, "event", runs.specs[0].Trigger)
				data, ok := runs.specs[0].Params["data"]
				assert.Equal(t, tt.wantData != nil, ok)
				if tt.wantData != nil {
					got, _ := json.Marshal(data)
					want, _ := json.Marshal(tt.wantData)
					assert.JSONEq(t, string(want), string(got))
				}
			}
		})
	}
}

func TestEventAgainAnswers200(t *testing.T) {
	t.Parallel()
	a, runs := newApp(t)
	body := `{"specversion":"1.0","id":"1","source":"/s","type":"x","subject":"ops/build"}`
	code, first, hdr := do(t, a, raw("POST", "http://baton/api/v2/event", "application/cloudevents+json", body))
	require.Equal(t, 201, code, first)
	assert.NotEmpty(t, hdr.Get("Location"))
	code, again, _ := do(t, a, raw("POST", "http://baton/api/v2/event", "application/cloudevents+json", body))
	require.Equal(t, 200, code, again)
	assert.JSONEq(t, first, again)
	code, list, _ := do(t, a, raw("POST", "http://baton/api/v2/event", "application/cloudevents-batch+json", "["+body+"]"))
	require.Equal(t, 200, code, "a batch of events all seen before")
	assert.JSONEq(t, "["+first+"]", list)
	assert.Len(t, runs.runs, 1)
}

func TestPlainWebhook(t *testing.T) {
	t.Parallel()
	const target = "http://baton/api/v2/webhook"
	tests := []struct {
		name string
		req  *http.Request
		want int
	}{
		{"JSON", raw("POST", target+"?ref=ops/build", "application/json", `{"a":1}`), 201},
		{"no body", raw("POST", target+"?ref=ops/build", "", ""), 400},
		{"a JSON string", raw("POST", target+"?ref=ops/build", "", `"just this"`), 201},
		{"form", raw("POST", target+"?ref=ops/build", "application/x-www-form-urlencoded", "a=1"), 415},
		{"malformed", raw("POST", target+"?ref=ops/build", "application/json", `{"a":`), 400},
		{"deep", raw("POST", target+"?ref=ops/build", "application/json", strings.Repeat("[", 80)+strings.Repeat("]", 80)), 400},
		{"no ref", raw("POST", target, "application/json", `{}`), 400},
		{"no credentials", raw("POST", target+"?ref=ops/build", "application/json", `{}`, headerAs, "anonymous"), 401},
		{"no ref, no credentials", raw("POST", target, "application/json", `{}`, headerAs, "anonymous"), 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, runs := newApp(t)
			code, body, _ := do(t, a, tt.req)
			require.Equal(t, tt.want, code, body)
			if tt.want != 201 {
				assert.Empty(t, runs.specs)
				return
			}
			require.Len(t, runs.specs, 1)
			assert.Equal(t, "webhook", runs.specs[0].Trigger)
		})
	}

	a, runs := newApp(t)
	for i, want := range []int{201, 200} {
		code, body, _ := do(t, a, raw("POST", target+"?ref=ops/build", "application/json", `{"a":1}`, "Idempotency-Key", "k1"))
		assert.Equal(t, want, code, "delivery %d: %s", i, body)
	}
	assert.Len(t, runs.runs, 1)
}
