package standalone_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/gateway/internal/standalone"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
)

// TestMain runs the tests, each exchange with the gateway checked against the published
// contract, and reports how many were.
func TestMain(m *testing.M) { testkit.Main(m, contract.Report) }

// baton is one running standalone process.
type baton struct {
	url   string
	token string
	// admin is the operators' listener's base URL.
	admin string
	stop  func() error
}

var (
	banner        = regexp.MustCompile(`Baton is running at (http://\S+)/api/v2\nAdmin token: (\S+)\nIn a browser: (http://\S+)/ `)
	metricsBanner = regexp.MustCompile(`Metrics for operators at (http://\S+)/metrics`)
)

// start runs standalone.Run with vars and waits for its banner.
func start(t testing.TB, vars map[string]string) *baton {
	t.Helper()
	return startWith(t, vars, standalone.Options{})
}

// startWith runs standalone.RunWith with vars and opts and waits for its banner.
func startWith(t testing.TB, vars map[string]string, opts standalone.Options) *baton {
	t.Helper()
	if _, set := vars["BATON_ADMIN_ADDR"]; !set {
		// Tests run many at once: each its own free port.
		vars["BATON_ADMIN_ADDR"] = "127.0.0.1:0"
	}
	ctx, cancel := context.WithCancel(context.Background())
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- standalone.RunWith(ctx, func(k string) string { return vars[k] }, w, opts)
		_ = w.Close()
	}()
	lines := make(chan string, 2)
	go func() {
		s := bufio.NewScanner(r)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	deadline := time.After(2 * time.Minute)
	for !banner.MatchString(out.String()) {
		select {
		case line, ok := <-lines:
			if !ok {
				require.FailNow(t, "standalone stopped before serving", "%v", <-done)
			}
			out.WriteString(line + "\n")
		case err := <-done:
			require.FailNow(t, "standalone stopped before serving", "%v", err)
		case <-deadline:
			cancel()
			require.FailNow(t, "standalone did not start")
		}
	}
	m := banner.FindStringSubmatch(out.String())
	require.Equal(t, m[1], m[3], "the banner says where the web UI is")
	var admin string
	if a := metricsBanner.FindStringSubmatch(out.String()); a != nil {
		admin = a[1]
	}
	stopped := false
	b := &baton{url: m[1], token: m[2], admin: admin, stop: func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}}
	t.Cleanup(func() { _ = b.stop() })
	return b
}

// call sends a request through the gateway with token (none when empty) and decodes the
// object it answers.
func (b *baton) call(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	var out map[string]any
	code := b.callJSON(t, method, path, token, body, &out)
	return code, out
}

// callJSON sends a request as call does and decodes what it answers into out.
func (b *baton) callJSON(t *testing.T, method, path, token, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.url+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := contract.Client(t, nil).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, out), string(raw))
	}
	return resp.StatusCode
}

// TestIntegrationTeams drives gateway → identity → Mongo → Kafka → workflows on the test
// infrastructure, with every service registered in and found through Consul.
func TestIntegrationTeams(t *testing.T) {
	t.Parallel()
	dbPrefix := testkit.Database(t) + "_"
	consulAddr := testkit.ConsulAddr(t)
	b := start(t, map[string]string{
		"BATON_DATA_DIR":           t.TempDir(),
		"BATON_GATEWAY_ADDR":       "127.0.0.1:0",
		"BATON_BOOTSTRAP_TOKEN":    "integration-admin-token",
		"BATON_MONGO_URI":          testkit.MongoURI(t),
		"BATON_MONGO_DB_PREFIX":    dbPrefix,
		"BATON_KAFKA_BROKERS":      strings.Join(testkit.KafkaBrokers(t), ","),
		"BATON_KAFKA_TOPIC_PREFIX": testkit.TopicPrefix(t),
		"BATON_CONSUL_ADDR":        consulAddr,
		"BATON_LOG_LEVEL":          "error",
	})
	require.Equal(t, "integration-admin-token", b.token)

	// Every service is registered in Consul with a passing check.
	client, err := registry.NewConsulClient(consulAddr)
	require.NoError(t, err)
	resolver := registry.NewConsulResolver(client, time.Millisecond)
	for _, svc := range []string{"identity", "workflows", "tasks", "runs", "runner", "schedules", "integrations"} {
		urls, err := resolver.Resolve(context.Background(), svc)
		require.NoError(t, err, svc)
		assert.NotEmpty(t, urls, svc)
	}

	code, body := b.call(t, http.MethodPost, "/api/v2/team", "", `{"name":"infra"}`)
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "UNAUTHENTICATED", body["reason"])
	code, _ = b.call(t, http.MethodPost, "/api/v2/team", "wrong-token", `{"name":"infra"}`)
	assert.Equal(t, http.StatusUnauthorized, code)

	code, team := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"Infra Team","labels":{"org":"platform"}}`)
	require.Equal(t, http.StatusCreated, code, team)
	assert.Equal(t, "infra-team", team["name"])

	code, got := b.call(t, http.MethodGet, "/api/v2/team/infra-team", b.token, "")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, team["id"], got["id"])
	code, got = b.call(t, http.MethodPatch, "/api/v2/team/infra-team", b.token, `{"displayName":"Infra"}`)
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Infra", got["displayName"])
	code, page := b.call(t, http.MethodGet, "/api/v2/team/query?labels=org%3Dplatform", b.token, "")
	require.Equal(t, http.StatusOK, code)
	assert.EqualValues(t, 1, page["totalElements"])
	code, body = b.call(t, http.MethodPost, "/api/v2/team/validate-name", b.token, `{"name":"infra-team"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, "TEAM_NON_UNIQUE_NAME", body["reason"])

	// The workflows service learns of the team from the event, in its own database.
	mc, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	defer mc.Disconnect(context.Background())
	known := mc.Database(dbPrefix + "workflows").Collection("teams")
	count := func() int64 {
		n, err := known.CountDocuments(context.Background(), bson.M{"_id": "infra-team", "teamId": team["id"]})
		require.NoError(t, err)
		return n
	}
	require.Eventually(t, func() bool { return count() == 1 }, 30*time.Second, 20*time.Millisecond)

	code, _ = b.call(t, http.MethodDelete, "/api/v2/team/infra-team", b.token, "")
	require.Equal(t, http.StatusNoContent, code)
	require.Eventually(t, func() bool { return count() == 0 }, 30*time.Second, 20*time.Millisecond)

	// The integrations service, found through Consul, knows the team is gone.
	code, body = b.call(t, http.MethodGet, "/api/v2/integration?team=infra-team", b.token, "")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, "TEAM_NOT_FOUND", body["reason"])

	require.NoError(t, b.stop())
	// A stopped process has left Consul.
	for _, svc := range []string{"identity", "workflows"} {
		_, err := resolver.Resolve(context.Background(), svc)
		assert.ErrorIs(t, err, registry.ErrNoInstance, svc)
	}
}

// TestIntegrationStandaloneDefaults runs what `make run` runs: each service's SQLite file
// under the data directory and an embedded Kafka, a generated admin token, the runner's
// files there too, and data kept across restarts.
func TestIntegrationStandaloneDefaults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"BATON_DATA_DIR": dir, "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"}
	b := start(t, vars)
	kept, err := os.ReadFile(filepath.Join(dir, "admin-token"))
	require.NoError(t, err)
	assert.Equal(t, b.token, strings.TrimSpace(string(kept)))
	info, err := os.Stat(filepath.Join(dir, "admin-token"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"kept"}`)
	require.Equal(t, http.StatusCreated, code, out)
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/kept/workflow", b.token, `{"name":"sh","tasks":[{"name":"start","type":"start"},
			{"name":"s","type":"script","params":[{"name":"script","value":"true"}],"dependencies":[{"taskRef":"start"}]},
			{"name":"end","type":"end","dependencies":[{"taskRef":"s"}]}]}`)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/kept/workflow/sh/submit?start=true", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	require.Eventually(t, func() bool {
		_, r := b.call(t, http.MethodGet, "/api/v2/team/kept/workflowrun/"+run["id"].(string), b.token, "")
		return r["status"] == "succeeded"
	}, 30*time.Second, 10*time.Millisecond)
	runner, err := os.Stat(filepath.Join(dir, "runner"))
	require.NoError(t, err, "the runner's workspaces and journal are in the data directory")
	assert.True(t, runner.IsDir())
	_, err = os.Stat(filepath.Join(dir, "workflows.db"))
	require.NoError(t, err, "the workflows service keeps its data in a SQLite file of its own")
	require.NoError(t, b.stop())

	again := start(t, vars)
	assert.Equal(t, b.token, again.token, "the admin token survives a restart")
	code, out = again.call(t, http.MethodGet, "/api/v2/team/kept", again.token, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.Equal(t, "kept", out["name"])
	code, out = again.call(t, http.MethodGet, "/api/v2/team/kept/workflow/sh", again.token, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.EqualValues(t, 1, out["version"], "the workflow survives a restart")
	require.NoError(t, again.stop())
}

// A user who creates a team owns it at once: the gateway forgets the creator's cached
// principal after a membership-changing request, instead of refusing for the cache's TTL.
func TestIntegrationCreatorOwnsTheTeamAtOnce(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{
		"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error",
		"BATON_AUTH_CACHE_TTL": "1h",
	})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"seed","members":[{"email":"dana@example.com","role":"reader"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, users := b.call(t, http.MethodGet, "/api/v2/user/query", b.token, "")
	require.Equal(t, http.StatusOK, code, users)
	var dana string
	for _, u := range users["content"].([]any) {
		if u.(map[string]any)["email"] == "dana@example.com" {
			dana = u.(map[string]any)["id"].(string)
		}
	}
	require.NotEmpty(t, dana)
	code, tok := b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"user","name":"dana","principal":"`+dana+`"}`)
	require.Equal(t, http.StatusCreated, code, tok)
	token := tok["token"].(string)

	// Cached now, as a member of "seed" only.
	code, _ = b.call(t, http.MethodGet, "/api/v2/team/seed", token, "")
	require.Equal(t, http.StatusOK, code)
	code, out = b.call(t, http.MethodPost, "/api/v2/team", token, `{"name":"danas-team"}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPatch, "/api/v2/team/danas-team", token, `{"displayName":"Dana's"}`)
	assert.Equal(t, http.StatusOK, code, out)
}

// Definitions cross three services: a workflow references a team task (resolved by the
// tasks service), the workflow count is limited by the team's quota (owned by identity)
// and reported back in the team's usage, and the task cannot be deleted while in use.
func TestIntegrationDefinitionsAcrossServices(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"defs","quotas":{"maxWorkflowCount":2}}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/defs/task", b.token,
		`{"name":"greet","type":"template","spec":{"image":"alpine:3","script":"echo hello"}}`)
	require.Equal(t, http.StatusCreated, code, out)

	workflow := func(name string) string {
		return `{"name":"` + name + `","tasks":[{"name":"start","type":"start"},` +
			`{"name":"hi","type":"template","taskRef":"defs/greet","dependencies":[{"taskRef":"start"}]},` +
			`{"name":"end","type":"end","dependencies":[{"taskRef":"hi"}]}]}`
	}
	// The team's workflows service learns of the team from its event: retry until it has.
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/defs/workflow", b.token, workflow("one"))
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, out = b.call(t, http.MethodGet, "/api/v2/team/defs/workflow/one", b.token, "")
	require.Equal(t, http.StatusOK, code, out)
	assert.EqualValues(t, 1, out["tasks"].([]any)[1].(map[string]any)["taskVersion"], "the task version is pinned")

	code, out = b.call(t, http.MethodPost, "/api/v2/team/defs/workflow", b.token, workflow("two"))
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/defs/workflow", b.token, workflow("three"))
	assert.Equal(t, http.StatusTooManyRequests, code, out)
	assert.Equal(t, "QUOTA_EXCEEDED", out["reason"])

	code, team := b.call(t, http.MethodGet, "/api/v2/team/defs", b.token, "")
	require.Equal(t, http.StatusOK, code, team)
	assert.EqualValues(t, 2, team["quotas"].(map[string]any)["currentWorkflowCount"])

	code, out = b.call(t, http.MethodDelete, "/api/v2/team/defs/task/greet", b.token, "")
	assert.Equal(t, http.StatusConflict, code, out)
	assert.Equal(t, "TASK_IN_USE", out["reason"])
	assert.Contains(t, out["message"], "one")

	code, out = b.call(t, http.MethodPost, "/api/v2/team/defs/workflow", b.token,
		`{"name":"bad","tasks":[{"name":"start","type":"start"},{"name":"x","type":"template","taskRef":"defs/nope","dependencies":[{"taskRef":"start"}]}]}`)
	assert.Equal(t, http.StatusBadRequest, code, out)
	assert.NotEmpty(t, out["errors"])
}

// A retention of the embedded broker that is not a duration of a second or more stops the
// process before it starts anything, naming the variable.
func TestKafkaRetentionMustBeADuration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, v := range []string{"soon", "500ms", "-1h"} {
		vars := map[string]string{"BATON_DATA_DIR": dir, "BATON_KAFKA_RETENTION": v}
		err := standalone.Run(context.Background(), func(k string) string { return vars[k] }, io.Discard)
		require.Error(t, err, v)
		assert.Contains(t, err.Error(), "BATON_KAFKA_RETENTION", v)
	}
}

// Standalone mode collects garbage less often than Go's default, unless GOGC says how
// often. (Not parallel: the setting is the process's.)
func TestTuneGC(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	for _, tt := range []struct {
		gogc string
		want int
	}{
		{gogc: "", want: standalone.GCPercent},
		{gogc: "150", want: 100}, // the runtime applied GOGC; it is left alone
	} {
		debug.SetGCPercent(100)
		standalone.TuneGC(func(k string) string {
			if k == "GOGC" {
				return tt.gogc
			}
			return ""
		})
		assert.Equal(t, tt.want, debug.SetGCPercent(100), "GOGC=%q", tt.gogc)
	}
}
