package standalone_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/contract"
)

// startUnlimited starts a standalone Baton, activated, without a rate limit: hostile
// tests send many requests at once.
func startUnlimited(t *testing.T) *baton {
	t.Helper()
	return start(t, map[string]string{
		"BATON_DATA_DIR":      t.TempDir(),
		"BATON_GATEWAY_ADDR":  "127.0.0.1:0",
		"BATON_LOG_LEVEL":     "error",
		"BATON_RATE_LIMIT":    "0",
		"BATON_AUTO_ACTIVATE": "true",
	})
}

// hostileCase is one request with garbage in it and the answer it must get.
type hostileCase struct {
	name   string
	method string
	path   string // with its query
	header http.Header
	body   string
	// wantStatus and wantReason are the answer; wantReason may be empty for a 2xx.
	wantStatus int
	wantReason string
	// check looks further at the answer's body.
	check func(t *testing.T, body map[string]any)
}

// TestIntegrationHostileCases sends, through the gateway, requests that used to answer 5xx
// or be taken with their garbage dropped: label keys outside the one rule on every resource
// with labels, JSON with data after its value, a cron that never fires, a wrong activation
// code on an activated installation, null bodies, and requests the gateway answers itself.
// Each must get its 4xx (or be kept as sent) in the contract's shape.
func TestIntegrationHostileCases(t *testing.T) {
	t.Parallel()
	b := startUnlimited(t)
	code, team := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"edge","members":[{"email":"edge@example.com","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, team)
	members, _ := team["members"].([]any)
	require.Len(t, members, 1, team)
	userID, _ := members[0].(map[string]any)["id"].(string)
	require.NotEmpty(t, userID, team)
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/edge/workflow", b.token,
			`{"name":"build","triggers":{"webhook":{"enabled":true},"event":{"enabled":true}},
			  "tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)

	schedule := func(extra string) string {
		return `{"name":"s","workflowRef":"build","cronSchedule":"0 2 * * *","timezone":"Europe/Paris"` + extra + `}`
	}
	wfBody := func(labels string) string {
		return `{"name":"` + fmt.Sprintf("w%d", len(labels)) + `","labels":` + labels +
			`,"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`
	}
	jsonType := http.Header{"Content-Type": {"application/json"}}
	binaryEvent := http.Header{"Content-Type": {"application/json"}, "Ce-Specversion": {"1.0"},
		"Ce-Id": {"hostile-1"}, "Ce-Source": {"/hostile"}, "Ce-Type": {"hostile.test"}}
	utcMillis := regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
	labelsOf := func(want map[string]any) func(*testing.T, map[string]any) {
		return func(t *testing.T, body map[string]any) { assert.Equal(t, want, body["labels"]) }
	}

	tests := []hostileCase{
		// One label-key rule, on every resource with labels.
		{name: "schedule label key $where", method: http.MethodPost, path: "/api/v2/team/edge/schedule",
			body: schedule(`,"labels":{"$where":"1"}`), wantStatus: 400, wantReason: "SCHEDULE_INVALID_REQ"},
		{name: "schedule label key with a control character", method: http.MethodPost, path: "/api/v2/team/edge/schedule",
			body: schedule(`,"labels":{"a\u0001b":"1"}`), wantStatus: 400, wantReason: "SCHEDULE_INVALID_REQ"},
		{name: "schedule dotted label key is kept", method: http.MethodPost, path: "/api/v2/team/edge/schedule",
			body: schedule(`,"labels":{"app.kubernetes.io/name":"x"}`), wantStatus: 201,
			check: labelsOf(map[string]any{"app.kubernetes.io/name": "x"})},
		{name: "team dotted label key is kept", method: http.MethodPatch, path: "/api/v2/team/edge",
			body: `{"labels":{"app.kubernetes.io/name":"x"}}`, wantStatus: 200,
			check: labelsOf(map[string]any{"app.kubernetes.io/name": "x"})},
		{name: "team label key with a blank", method: http.MethodPatch, path: "/api/v2/team/edge",
			body: `{"labels":{"a b":"x"}}`, wantStatus: 400, wantReason: "TEAM_INVALID_REQ"},
		{name: "user label key with a blank", method: http.MethodPatch, path: "/api/v2/user/" + userID,
			body: `{"labels":{"a b":"x"}}`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "workflow label key with a blank", method: http.MethodPost, path: "/api/v2/team/edge/workflow",
			body: wfBody(`{"a b":"x"}`), wantStatus: 400},
		{name: "workflow label key with an empty prefix part", method: http.MethodPost, path: "/api/v2/team/edge/workflow",
			body: wfBody(`{"a..b/c":"x"}`), wantStatus: 400},
		{name: "submit label key with a blank", method: http.MethodPost, path: "/api/v2/team/edge/workflow/build/submit",
			body: `{"labels":{"a b":"x"}}`, wantStatus: 400, wantReason: "WORKFLOWRUN_INVALID_REQ"},
		{name: "task label key with a blank", method: http.MethodPost, path: "/api/v2/team/edge/task",
			body: `{"name":"t1","type":"template","labels":{"a b":"x"},"spec":{"image":"alpine:3","script":"true"}}`, wantStatus: 400},

		// One strict JSON rule: nothing after the value.
		{name: "webhook with garbage after its JSON", method: http.MethodPost, path: "/api/v2/webhook?ref=edge/build",
			header: jsonType, body: `{"x":1}}}garbage`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "binary event data with garbage after its JSON", method: http.MethodPost, path: "/api/v2/event?ref=edge/build",
			header: binaryEvent, body: `{"x":1}}}garbage`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		// The CloudEvents SDK refuses this one itself; the case keeps it so.
		{name: "structured event with garbage after it", method: http.MethodPost, path: "/api/v2/event?ref=edge/build",
			header:     http.Header{"Content-Type": {"application/cloudevents+json"}},
			body:       `{"specversion":"1.0","id":"hostile-2","source":"/hostile","type":"hostile.test"}}garbage`,
			wantStatus: 400, wantReason: "REQUEST_INVALID"},

		// A cron that never fires; dates in UTC with milliseconds.
		{name: "validate-cron of a date that never comes", method: http.MethodGet,
			path: "/api/v2/team/edge/schedule/validate-cron?cron=" + url.QueryEscape("0 0 30 2 *"), wantStatus: 200,
			check: func(t *testing.T, body map[string]any) {
				assert.Equal(t, false, body["valid"])
				assert.Contains(t, body["message"], "never fires")
			}},
		{name: "validate-cron in a zone writes UTC", method: http.MethodGet,
			path: "/api/v2/team/edge/schedule/validate-cron?timezone=Asia/Tokyo&cron=" + url.QueryEscape("0 8 * * MON"), wantStatus: 200,
			check: func(t *testing.T, body map[string]any) {
				dates, _ := body["nextDates"].([]any)
				require.Len(t, dates, 5, body)
				for _, d := range dates {
					assert.Regexp(t, utcMillis, d)
					at, err := time.Parse(time.RFC3339, d.(string))
					require.NoError(t, err)
					assert.Equal(t, 8, at.In(time.FixedZone("JST", 9*3600)).Hour(), "08:00 in Tokyo")
				}
			}},
		{name: "schedule of a date that never comes", method: http.MethodPost, path: "/api/v2/team/edge/schedule",
			body: `{"workflowRef":"build","cronSchedule":"0 0 30 2 *","timezone":"UTC"}`, wantStatus: 400, wantReason: "SCHEDULE_INVALID_REQ"},

		// A wrong code on an activated installation.
		{name: "activate with a wrong code", method: http.MethodPut, path: "/api/v2/activate",
			body: `{"otc":"wrong"}`, wantStatus: 400, wantReason: "REQUEST_INVALID"},

		// Null bodies are not requests for nothing.
		{name: "PATCH team null", method: http.MethodPatch, path: "/api/v2/team/edge", body: `null`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "PATCH user null", method: http.MethodPatch, path: "/api/v2/user/" + userID, body: `null`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "DELETE approvers null", method: http.MethodDelete, path: "/api/v2/team/edge/approvers", body: `null`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "DELETE members null", method: http.MethodDelete, path: "/api/v2/team/edge/members", body: `null`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
		{name: "PUT settings null", method: http.MethodPut, path: "/api/v2/settings", body: `null`, wantStatus: 400, wantReason: "REQUEST_INVALID"},
	}
	client := contract.Client(t, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, b.url+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tt.header {
				req.Header[k] = v
			}
			req.Header.Set("Authorization", "Bearer "+b.token)
			resp, err := client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tt.wantStatus, resp.StatusCode, "%s", raw)
			var body map[string]any
			require.NoError(t, json.Unmarshal(raw, &body), "%s", raw)
			if tt.wantReason != "" {
				assert.Equal(t, tt.wantReason, body["reason"], "%s", raw)
			}
			if resp.StatusCode >= 400 {
				assert.EqualValues(t, resp.StatusCode, body["status"], "%s", raw)
			}
			if tt.check != nil {
				tt.check(t, body)
			}
		})
	}
}

// TestIntegrationGatewayErrorsNameTheirRequest: the errors the gateway answers itself (an
// unknown path, a URI or head too long) carry the request's path and a trace ID, like every
// error a service answers.
func TestIntegrationGatewayErrorsNameTheirRequest(t *testing.T) {
	t.Parallel()
	b := startUnlimited(t)
	many := http.Header{}
	for i := range 400 {
		many.Set(fmt.Sprintf("X-H%d", i), strings.Repeat("m", 100))
	}
	tests := []struct {
		name       string
		req        hostileRequest
		wantStatus int
		wantPath   string
	}{
		{"an unknown path", hostileRequest{method: http.MethodGet, path: "/api/v2/nowhere"}, 404, "/api/v2/nowhere"},
		{"outside the API", hostileRequest{method: http.MethodGet, path: "/nowhere"}, 404, "/nowhere"},
		{"an unknown path with escapes", hostileRequest{method: http.MethodGet, path: "/api/v2/a%00b/%FF%FE"}, 404, "/api/v2/a%00b/%FF%FE"},
		{"an unknown path with dot segments", hostileRequest{method: http.MethodGet, path: "/api/v2/team/..%2F../x/y/z"}, 404, "/api/v2/team/..%2F../x/y/z"},
		{"a method no route takes", hostileRequest{method: http.MethodDelete, path: "/api/v2/features"}, 405, "/api/v2/features"},
		{"a 12 KiB query", hostileRequest{method: http.MethodGet, path: "/api/v2/team/edge", query: "x=" + strings.Repeat("a", 12<<10)}, 414, "/api/v2/team/edge"},
		{"a 40 KiB query", hostileRequest{method: http.MethodGet, path: "/api/v2/team/edge", query: "x=" + strings.Repeat("a", 40<<10)}, 431, "/api/v2/team/edge"},
		{"a 40 KiB header", hostileRequest{method: http.MethodGet, path: "/api/v2/team/edge",
			header: http.Header{"X-Big": {strings.Repeat("b", 40<<10)}}}, 431, "/api/v2/team/edge"},
		{"400 headers", hostileRequest{method: http.MethodPost, path: "/api/v2/team", header: many, body: []byte(`{}`)}, 431, "/api/v2/team"},
	}
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := sendOne(client, b, tt.req)
			require.NoError(t, o.err)
			require.Equal(t, tt.wantStatus, o.status, o.body)
			var body struct {
				Status  int    `json:"status"`
				Reason  string `json:"reason"`
				Path    string `json:"path"`
				TraceID string `json:"traceId"`
			}
			require.NoError(t, json.Unmarshal([]byte(o.body), &body), o.body)
			assert.Equal(t, tt.wantStatus, body.Status, o.body)
			assert.NotEmpty(t, body.Reason, o.body)
			assert.Equal(t, tt.wantPath, body.Path, o.body)
			assert.Regexp(t, `^[0-9a-f]{32}$`, body.TraceID, o.body)
		})
	}
}
