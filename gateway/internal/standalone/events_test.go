package standalone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// eventsRig is one Baton with team ops and its workflows: ingest (event trigger on, for
// events of type com.example.push; webhook trigger on) and quiet (both off).
type eventsRig struct {
	*baton
}

// sdkClient is the CloudEvents SDK's HTTP client and the answers it got.
type sdkClient struct {
	cloudevents.Client
	answers *answerLog
}

// answerLog keeps the last answer a transport got, for tests sending through the
// CloudEvents SDK's client, which reads answers as events.
type answerLog struct {
	next http.RoundTripper
	mu   sync.Mutex
	code int
	body []byte
	hdr  http.Header
}

func (a *answerLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := a.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	a.mu.Lock()
	a.code, a.body, a.hdr = resp.StatusCode, raw, resp.Header.Clone()
	a.mu.Unlock()
	return resp, nil
}

func (a *answerLog) last() (int, []byte, http.Header) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.code, a.body, a.hdr
}

func ingestWorkflow(name string, on bool, conds string) string {
	return fmt.Sprintf(`{"name":%q,"triggers":{"event":{"enabled":%t,"conditions":%s},"webhook":{"enabled":%t}},
		"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`, name, on, conds, on)
}

const pushOnly = `[{"field":"$.type","operation":"equals","value":"com.example.push"}]`

func startEvents(t *testing.T) *eventsRig {
	t.Helper()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	r := &eventsRig{baton: b}
	r.save(t, ingestWorkflow("ingest", true, pushOnly))
	r.save(t, ingestWorkflow("quiet", false, "[]"))
	return r
}

// save saves a workflow of team ops, once the team has reached the workflows service.
func (r *eventsRig) save(t *testing.T, body string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, out := r.call(t, http.MethodPut, "/api/v2/team/ops/workflow", r.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusOK || code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
}

// client is the CloudEvents SDK's HTTP client sending to /api/v2/event (with query) as
// token, through the contract's checks.
func (r *eventsRig) client(t *testing.T, query, token string) sdkClient {
	t.Helper()
	answers := &answerLog{next: contract.Client(t, nil).Transport}
	opts := []cehttp.Option{cehttp.WithTarget(r.url + "/api/v2/event" + query), cehttp.WithClient(http.Client{Transport: answers})}
	if token != "" {
		opts = append(opts, cehttp.WithHeader("Authorization", "Bearer "+token))
	}
	c, err := cloudevents.NewClientHTTP(opts...)
	require.NoError(t, err)
	return sdkClient{Client: c, answers: answers}
}

// send sends e with c (structured when asked) and answers the gateway's status and body.
func (r *eventsRig) send(t *testing.T, c sdkClient, e event.Event, structured bool) (int, []byte, http.Header) {
	t.Helper()
	ctx := context.Background()
	if structured {
		ctx = binding.WithForceStructured(ctx)
	}
	res := c.Send(ctx, e)
	var hr *cehttp.Result
	require.True(t, protocol.ResultAs(res, &hr), "%v", res)
	code, body, hdr := c.answers.last()
	require.Equal(t, hr.StatusCode, code)
	return code, body, hdr
}

// post sends a raw request with a content type and token through the contract's checks.
func (r *eventsRig) post(t *testing.T, path, contentType, token, body string, headers ...string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, r.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw, resp.Header
}

// runCount is how many runs team ops has.
func (r *eventsRig) runCount(t *testing.T) int {
	t.Helper()
	var c struct {
		Status map[string]int `json:"status"`
	}
	require.Equal(t, http.StatusOK, r.callJSON(t, http.MethodGet, "/api/v2/team/ops/workflowrun/count", r.token, "", &c))
	return c.Status["all"]
}

// run reads run id of team ops, its params by name.
func (r *eventsRig) run(t *testing.T, id string) (map[string]any, map[string]any) {
	t.Helper()
	code, v := r.call(t, http.MethodGet, "/api/v2/team/ops/workflowrun/"+id+"?withTasks=false", r.token, "")
	require.Equal(t, http.StatusOK, code, v)
	params := map[string]any{}
	for _, p := range v["params"].([]any) {
		p := p.(map[string]any)
		params[p["name"].(string)] = p["value"]
	}
	return v, params
}

func pushEvent(id, subject string, data any) event.Event {
	e := cloudevents.NewEvent()
	e.SetID(id)
	e.SetSource("https://ci.example.com/pipelines")
	e.SetType("com.example.push")
	e.SetSubject(subject)
	e.SetTime(time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC))
	if data != nil {
		if err := e.SetData(cloudevents.ApplicationJSON, data); err != nil {
			panic(err)
		}
	}
	return e
}

func decodeRun(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var v map[string]any
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	return v
}

// CloudEvents from the SDK's HTTP client, structured and binary, and a batch: each starts
// a run of the workflow its subject or ref names, with the event, its data and the data's
// keys as params; the same event again answers the first run.
func TestIntegrationEvents(t *testing.T) {
	t.Parallel()
	r := startEvents(t)
	c := r.client(t, "", r.token)

	code, body, hdr := r.send(t, c, pushEvent("e-1", "ops/ingest/main", map[string]any{"branch": "main", "n": 3}), true)
	require.Equal(t, http.StatusCreated, code, string(body))
	first := decodeRun(t, body)
	id := first["id"].(string)
	assert.Equal(t, "/api/v2/team/ops/workflowrun/"+id, hdr.Get("Location"))
	assert.Equal(t, "event", first["trigger"])
	assert.Equal(t, "ingest", first["workflowRef"])
	v, params := r.run(t, id)
	assert.Equal(t, "event", v["trigger"])
	assert.NotEmpty(t, v["initiatedBy"].(map[string]any)["type"])
	assert.Equal(t, map[string]any{"branch": "main", "n": float64(3)}, params["data"])
	assert.Equal(t, "main", params["branch"])
	assert.Equal(t, float64(3), params["n"])
	ev := params["event"].(map[string]any)
	assert.Equal(t, "e-1", ev["id"])
	assert.Equal(t, "https://ci.example.com/pipelines", ev["source"])
	assert.Equal(t, "ops/ingest/main", ev["subject"])
	assert.Equal(t, "2026-11-27T08:00:00Z", ev["time"])

	// The same source and id again: the first run, 200.
	code, body, _ = r.send(t, c, pushEvent("e-1", "ops/ingest/main", map[string]any{"branch": "main", "n": 3}), false)
	require.Equal(t, http.StatusOK, code, string(body))
	assert.Equal(t, id, decodeRun(t, body)["id"])

	// Binary mode, the workflow by ref, without data.
	bc := r.client(t, "?ref=ops/ingest", r.token)
	code, body, _ = r.send(t, bc, pushEvent("e-2", "", nil), false)
	require.Equal(t, http.StatusCreated, code, string(body))
	_, params = r.run(t, decodeRun(t, body)["id"].(string))
	assert.NotContains(t, params, "data")
	assert.Equal(t, "e-2", params["event"].(map[string]any)["id"])

	// Binary mode with text data.
	e := pushEvent("e-3", "/ops/ingest", nil)
	require.NoError(t, e.SetData("text/plain", "just words"))
	code, body, _ = r.send(t, c, e, false)
	require.Equal(t, http.StatusCreated, code, string(body))
	_, params = r.run(t, decodeRun(t, body)["id"].(string))
	assert.Equal(t, "just words", params["data"], "%s %v", body, params)

	// A batch, made by the SDK: two new events and one seen before.
	req, err := cehttp.NewHTTPRequestFromEvents(context.Background(), r.url+"/api/v2/event", []event.Event{
		pushEvent("e-4", "ops/ingest", map[string]any{"k": 1}), pushEvent("e-5", "ops/ingest", nil), pushEvent("e-1", "ops/ingest/main", nil)})
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+r.token)
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(raw))
	var runs []map[string]any
	require.NoError(t, json.Unmarshal(raw, &runs))
	require.Len(t, runs, 3)
	assert.Equal(t, id, runs[2]["id"], "the event seen before answers its run")
	assert.NotEqual(t, runs[0]["id"], runs[1]["id"])
	assert.Equal(t, 5, r.runCount(t))

	// The same batch again: every event seen before, 200.
	code, body, _ = r.post(t, "/api/v2/event", "application/cloudevents-batch+json", r.token,
		`[{"specversion":"1.0","id":"e-4","source":"https://ci.example.com/pipelines","type":"com.example.push","subject":"ops/ingest"}]`)
	require.Equal(t, http.StatusOK, code, string(body))
	var seen []map[string]any
	require.NoError(t, json.Unmarshal(body, &seen))
	require.Len(t, seen, 1)
	assert.Equal(t, runs[0]["id"], seen[0]["id"])
	assert.Equal(t, 5, r.runCount(t))

	// Plain JSON that names its specversion is a structured event.
	code, body, _ = r.post(t, "/api/v2/event?access_token="+r.token, "application/json",
		"", `{"specversion":"1.0","id":"e-6","source":"/s","type":"com.example.push","subject":"ops/ingest","data":{"x":1}}`)
	require.Equal(t, http.StatusCreated, code, string(body))
	assert.Equal(t, 6, r.runCount(t))

	// Keys a document store is wary of, and odd characters, are data like any other.
	code, body, _ = r.post(t, "/api/v2/event?ref=ops/ingest", "application/cloudevents+json", r.token,
		`{"specversion":"1.0","id":"e-7\u0000\u2603","source":"/s","type":"com.example.push","data":{"a.b":1,"$x":{"$y":2},"":"empty","k\u0000":"nul"}}`)
	require.Equal(t, http.StatusCreated, code, string(body))
	_, params = r.run(t, decodeRun(t, body)["id"].(string))
	assert.Equal(t, map[string]any{"a.b": float64(1), "$x": map[string]any{"$y": float64(2)}, "": "empty", "k\u0000": "nul"}, params["data"])
	assert.Equal(t, float64(1), params["a.b"])
	assert.NotContains(t, params, "", "a param needs a name")
}

// What is refused starts nothing: credentials missing or not enough, workflows unknown,
// triggers off or not matching, and bodies that are not events, malformed, too deep or
// too large.
func TestIntegrationEventsRefused(t *testing.T) {
	t.Parallel()
	r := startEvents(t)
	mint := func(body string) string {
		t.Helper()
		code, out := r.call(t, http.MethodPost, "/api/v2/token", r.token, body)
		require.Equal(t, http.StatusCreated, code, out)
		return out["token"].(string)
	}
	code, out := r.call(t, http.MethodPost, "/api/v2/team", r.token, `{"name":"dev"}`)
	require.Equal(t, http.StatusCreated, code, out)
	devTeam := mint(`{"type":"team","principal":"dev","permissions":["**/**"]}`)
	ingestToken := mint(`{"type":"workflow","principal":"ops/ingest","permissions":["workflowrun/write"]}`)
	reader := mint(`{"type":"team","principal":"ops","permissions":["**/read"]}`)

	event := func(id, subject, typ string) string {
		return fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/s","type":%q,"subject":%q}`, id, typ, subject)
	}
	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	huge := `{"specversion":"1.0","id":"big","source":"/s","type":"com.example.push","subject":"ops/ingest","data":"` + strings.Repeat("x", 1<<20) + `"}`
	var batch []string
	for i := range 101 {
		batch = append(batch, event(fmt.Sprint("b", i), "ops/ingest", "com.example.push"))
	}
	tests := []struct {
		name, path, ct, token, body string
		want                        int
		reason                      string
	}{
		{"no credentials", "/api/v2/event", "application/cloudevents+json", "", event("1", "ops/ingest", "com.example.push"), 401, "UNAUTHENTICATED"},
		{"another team's token", "/api/v2/event", "application/cloudevents+json", devTeam, event("1", "ops/ingest", "com.example.push"), 403, "PERMISSION_DENIED"},
		{"a token that reads", "/api/v2/event", "application/cloudevents+json", reader, event("1", "ops/ingest", "com.example.push"), 403, "PERMISSION_DENIED"},
		{"a workflow token, another workflow", "/api/v2/event", "application/cloudevents+json", ingestToken, event("1", "ops/quiet", "com.example.push"), 403, "PERMISSION_DENIED"},
		{"an unknown workflow", "/api/v2/event", "application/cloudevents+json", r.token, event("1", "ops/nope", "com.example.push"), 404, "WORKFLOW_NOT_FOUND"},
		{"an unknown team", "/api/v2/event", "application/cloudevents+json", r.token, event("1", "nope/ingest", "com.example.push"), 404, "TEAM_NOT_FOUND"},
		{"trigger off", "/api/v2/event", "application/cloudevents+json", r.token, event("1", "ops/quiet", "com.example.push"), 400, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"condition not met", "/api/v2/event", "application/cloudevents+json", r.token, event("1", "ops/ingest", "com.example.tag"), 400, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"no workflow", "/api/v2/event", "application/cloudevents+json", r.token, event("1", "", "com.example.push"), 400, "REQUEST_INVALID"},
		{"plain JSON", "/api/v2/event?ref=ops/ingest", "application/json", r.token, `{"id":"1"}`, 400, "REQUEST_INVALID"},
		{"malformed", "/api/v2/event", "application/cloudevents+json", r.token, `{"specversion":"1.0","id":`, 400, "REQUEST_INVALID"},
		{"no id", "/api/v2/event", "application/cloudevents+json", r.token, `{"specversion":"1.0","source":"/s","type":"t","subject":"ops/ingest"}`, 400, "REQUEST_INVALID"},
		{"bad specversion", "/api/v2/event", "application/cloudevents+json", r.token, `{"specversion":"9.9","id":"1","source":"/s","type":"t","subject":"ops/ingest"}`, 400, "REQUEST_INVALID"},
		{"too deep", "/api/v2/event", "application/cloudevents+json", r.token, `{"specversion":"1.0","id":"1","source":"/s","type":"com.example.push","subject":"ops/ingest","data":` + deep + `}`, 400, "REQUEST_INVALID"},
		{"too large", "/api/v2/event", "application/cloudevents+json", r.token, huge, 413, "REQUEST_TOO_LARGE"},
		{"a batch too large", "/api/v2/event", "application/cloudevents-batch+json", r.token, "[" + strings.Join(batch, ",") + "]", 413, "REQUEST_TOO_LARGE"},
		{"a batch with a refused event", "/api/v2/event", "application/cloudevents-batch+json", r.token,
			"[" + event("ok", "ops/ingest", "com.example.push") + "," + event("no", "ops/ingest", "com.example.tag") + "]", 400, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"NUL in the ref", "/api/v2/event?ref=ops%00/ingest", "application/cloudevents+json", r.token, event("1", "", "com.example.push"), 400, "REQUEST_INVALID"},
		{"a webhook without credentials", "/api/v2/webhook?ref=ops/ingest", "application/json", "", `{}`, 401, "UNAUTHENTICATED"},
		{"a webhook, trigger off", "/api/v2/webhook?ref=ops/quiet", "application/json", r.token, `{}`, 400, "WORKFLOWRUN_TRIGGER_DISABLED"},
		{"a webhook, malformed", "/api/v2/webhook?ref=ops/ingest", "application/json", r.token, `{"a":`, 400, "REQUEST_INVALID"},
		{"a webhook, no ref", "/api/v2/webhook", "application/json", r.token, `{}`, 400, "REQUEST_INVALID"},
		{"a webhook, not JSON", "/api/v2/webhook?ref=ops/ingest", "text/plain", r.token, `hello`, 415, "UNSUPPORTED_MEDIA_TYPE"},
	}
	for _, tt := range tests {
		code, body, _ := r.post(t, tt.path, tt.ct, tt.token, tt.body)
		if assert.Equal(t, tt.want, code, "%s: %s", tt.name, truncate(body)) {
			var e struct{ Reason string }
			require.NoError(t, json.Unmarshal(body, &e), tt.name)
			assert.Equal(t, tt.reason, e.Reason, "%s: %s", tt.name, truncate(body))
		}
	}
	assert.Zero(t, r.runCount(t), "nothing refused ran")

	// The workflow's own token may; its trigger turned off stops the next events within
	// the trigger's short keeping.
	code, body, _ := r.post(t, "/api/v2/event", "application/cloudevents+json", ingestToken, event("w-1", "ops/ingest", "com.example.push"))
	require.Equal(t, http.StatusCreated, code, string(body))
	assert.Equal(t, "workflow", decodeRun(t, body)["initiatedBy"].(map[string]any)["type"])
	r.save(t, ingestWorkflow("ingest", true, `[{"field":"$.type","operation":"equals","value":"com.example.other"}]`))
	n := 0
	require.Eventually(t, func() bool {
		n++
		code, _, _ := r.post(t, "/api/v2/event", "application/cloudevents+json", r.token, event(fmt.Sprint("w-", 1+n), "ops/ingest", "com.example.push"))
		return code == http.StatusBadRequest
	}, 10*time.Second, 100*time.Millisecond, "a changed condition applies within seconds")
	r.save(t, ingestWorkflow("ingest", false, pushOnly))
	code, body, _ = r.post(t, "/api/v2/event", "application/cloudevents+json", r.token, event("w-off", "ops/ingest", "com.example.push"))
	assert.Equal(t, http.StatusBadRequest, code, "a trigger turned off stops runs at once: %s", body)
}

// A plain webhook: a run with the body as param data; an Idempotency-Key makes it once.
func TestIntegrationPlainWebhook(t *testing.T) {
	t.Parallel()
	r := startEvents(t)
	code, body, hdr := r.post(t, "/api/v2/webhook?ref=ops/ingest&access_token="+r.token, "application/json", "", `{"action":"opened","pr":{"n":7}}`)
	require.Equal(t, http.StatusCreated, code, string(body))
	first := decodeRun(t, body)
	assert.Equal(t, "/api/v2/team/ops/workflowrun/"+first["id"].(string), hdr.Get("Location"))
	assert.Equal(t, "webhook", first["trigger"])
	_, params := r.run(t, first["id"].(string))
	assert.Equal(t, map[string]any{"action": "opened", "pr": map[string]any{"n": float64(7)}}, params["data"])

	code, body, _ = r.post(t, "/api/v2/webhook?ref=ops/ingest", "application/json", r.token, `{}`, "Idempotency-Key", "delivery-1")
	require.Equal(t, http.StatusCreated, code, string(body))
	again := decodeRun(t, body)["id"]
	code, body, _ = r.post(t, "/api/v2/webhook?ref=ops/ingest", "application/json", r.token, `{}`, "Idempotency-Key", "delivery-1")
	require.Equal(t, http.StatusOK, code, string(body))
	assert.Equal(t, again, decodeRun(t, body)["id"])
	assert.Equal(t, 2, r.runCount(t))
}
