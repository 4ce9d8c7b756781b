package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
	"github.com/baton-flow/baton/services/integrations/internal/httpapi"
	"github.com/baton-flow/baton/services/integrations/internal/mongostore"
)

// The code host's published examples (testdata/codehost/SOURCES.md). The push and pull
// request examples come from installation 1; the installation examples name others.
const exampleInstallation = 1

// fakeRuns is the runs service: one run per team, workflow and idempotency key. refuse
// makes it refuse a workflow's runs; down makes every submit fail as an unreachable
// service would.
type fakeRuns struct {
	mu      sync.Mutex
	byKey   map[string]*events.WorkflowRun
	reqs    []runsapi.SubmitRun
	created int
	refuse  map[string]error
	down    bool
}

func (r *fakeRuns) Submit(_ context.Context, team, workflow string, req runsapi.SubmitRun) (runsapi.SubmittedRun, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return runsapi.SubmittedRun{}, apperr.New(apperr.DependencyUnavailable, "runs is down")
	}
	k := team + "/" + workflow + "/" + req.IdempotencyKey
	if run, ok := r.byKey[k]; ok {
		return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: run.ID}, Run: run}, nil
	}
	if err := r.refuse[workflow]; err != nil {
		return runsapi.SubmittedRun{}, err
	}
	r.created++
	r.reqs = append(r.reqs, req)
	run := &events.WorkflowRun{ID: fmt.Sprintf("run-%d", r.created), Team: team, WorkflowRef: workflow, WorkflowName: workflow,
		Trigger: req.Trigger, Status: "notstarted", Phase: "pending", InitiatedBy: events.Initiator{Type: req.InitiatedBy.Type, ID: req.InitiatedBy.ID, Name: req.InitiatedBy.Name}}
	r.byKey[k] = run
	return runsapi.SubmittedRun{RunState: runsapi.RunState{ID: run.ID}, Created: true, Run: run}, nil
}

func (r *fakeRuns) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created
}

// fakeWorkflows answers the workflows of each team whose codehost trigger is enabled.
type fakeWorkflows struct {
	mu sync.Mutex
	m  map[string][]workflowsapi.TriggeredWorkflow
}

func (w *fakeWorkflows) Triggers(_ context.Context, team, kind, workflow string) (workflowsapi.TriggeredWorkflows, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if kind != "codehost" || workflow != "" {
		return workflowsapi.TriggeredWorkflows{}, fmt.Errorf("unexpected question %s %s", kind, workflow)
	}
	return workflowsapi.TriggeredWorkflows{Workflows: w.m[team]}, nil
}

type fakeSettings struct {
	mu sync.Mutex
	st identityapi.IntegrationSettings
}

func (s *fakeSettings) IntegrationSettings(context.Context) (identityapi.IntegrationSettings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st, nil
}

type fakeTeams map[string]bool

func (t fakeTeams) Team(_ context.Context, name string) error {
	if !t[name] {
		return apperr.New(apperr.TeamNotFound, "Team '%s' was not found.", name)
	}
	return nil
}

const (
	secret = "It's a Secret to Everybody"
	appURL = "https://codehost.example/apps/baton"
)

// Principals of the tests: team ops exists, with owner, editor and reader users.
var (
	owner    = auth.Principal{Type: auth.TypeUser, ID: "u-owner", Name: "Olga", Teams: map[string]string{"ops": "owner"}, Person: "u-owner"}
	session  = auth.Principal{Type: auth.TypeSession, ID: "s-owner", Name: "Olga", Teams: map[string]string{"ops": "owner"}, Person: "u-owner"}
	editor   = auth.Principal{Type: auth.TypeUser, ID: "u-editor", Teams: map[string]string{"ops": "editor"}}
	reader   = auth.Principal{Type: auth.TypeUser, ID: "u-reader", Teams: map[string]string{"ops": "reader"}}
	outsider = auth.Principal{Type: auth.TypeUser, ID: "u-out", Teams: map[string]string{"dev": "owner"}}
	devOwner = outsider
	admin    = auth.Principal{Type: auth.TypeUser, ID: "u-admin", Roles: []string{"admin"}}
	opsToken = auth.Principal{Type: auth.TypeTeam, ID: "ops", Team: "ops", Permissions: []string{"**/**"}, TokenID: "t1"}
	global   = auth.Principal{Type: auth.TypeGlobal, ID: "g1", Permissions: []string{"**/**"}, TokenID: "t2"}
	narrowed = auth.Principal{Type: auth.TypeUser, ID: "u-owner", Teams: map[string]string{"ops": "owner"}, Permissions: []string{"workflow/read"}, TokenID: "t3"}
	nobody   = auth.Anonymous
)

type harness struct {
	app       *fiber.App
	signer    *auth.Signer
	runs      *fakeRuns
	workflows *fakeWorkflows
	settings  *fakeSettings
	store     *mongostore.CodeHostStore
	codehost  *app.CodeHost
	clock     *testkit.Clock
	deliveryN int
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	client, err := mongox.Connect(context.Background(), testkit.MongoURI(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	store := mongostore.NewCodeHostStore(client.Database(testkit.Database(t)))
	require.NoError(t, store.EnsureIndexes(context.Background()))
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := auth.NewSigner(key)
	require.NoError(t, err)
	h := &harness{
		signer:    signer,
		runs:      &fakeRuns{byKey: map[string]*events.WorkflowRun{}, refuse: map[string]error{}},
		workflows: &fakeWorkflows{m: map[string][]workflowsapi.TriggeredWorkflow{}},
		settings:  &fakeSettings{st: identityapi.IntegrationSettings{CodeHost: identityapi.CodeHostSettings{WebhookSecret: secret}}},
		store:     store,
		clock:     testkit.NewClock(time.Now().UTC().Truncate(time.Millisecond)),
	}
	h.codehost = app.NewCodeHost(app.CodeHostConfig{AppURL: appURL, StateKey: domain.CodeHostStateKey(key)}, app.CodeHostDeps{
		Store: store, Runs: h.runs, Workflows: h.workflows, Settings: h.settings, Teams: fakeTeams{"ops": true, "dev": true}, Now: h.clock.Now,
		Log: slog.New(slog.DiscardHandler)})
	h.app = httpx.NewApp(httpx.Config{Name: "integrations", NoTracing: true, Logger: slog.New(slog.DiscardHandler)})
	httpapi.Routes(h.app.Group("/api/v2", fiberauth.OpenMiddleware(signer)), httpapi.Areas{Events: &app.Events{}, CodeHost: h.codehost, Chat: &app.Chat{}, Now: h.clock.Now})
	return h
}

// do sends a request as p and answers the status and the decoded body.
func (h *harness) do(t testing.TB, method, target string, p auth.Principal, headers map[string]string, body []byte) (int, any) {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	require.NoError(t, h.signer.SetHeaders(p, req.Header.Set))
	resp, err := h.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out any
	if len(raw) > 0 {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

// example reads one of the code host's examples; installation, when not zero, is set
// as its installation's id (the body is then re-encoded).
func example(t testing.TB, name string, installation int64) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "codehost", name+".json"))
	require.NoError(t, err)
	if installation == 0 {
		return raw
	}
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	in, _ := doc["installation"].(map[string]any)
	if in == nil {
		in = map[string]any{}
		doc["installation"] = in
	}
	in["id"] = installation
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

func sign(body []byte) string {
	return domain.SignaturePrefix + hex.EncodeToString(domain.Sign(secret, body))
}

// deliver sends body as a signed delivery of event with a fresh delivery id, answering
// the status, the body and the id.
func (h *harness) deliver(t testing.TB, event string, body []byte) (int, map[string]any, string) {
	t.Helper()
	h.deliveryN++
	id := fmt.Sprintf("%s-%d-%d", t.Name(), h.deliveryN, time.Now().UnixNano())
	code, out := h.deliverAs(t, id, map[string]string{"X-GitHub-Event": event, "X-Hub-Signature-256": sign(body)}, body)
	return code, out, id
}

func (h *harness) deliverAs(t testing.TB, id string, headers map[string]string, body []byte) (int, map[string]any) {
	t.Helper()
	hs := map[string]string{"X-GitHub-Delivery": id}
	for k, v := range headers {
		hs[k] = v
	}
	code, out := h.do(t, http.MethodPost, "/api/v2/webhook", nobody, hs, body)
	m, _ := out.(map[string]any)
	return code, m
}

// installed delivers the installation example created as installation id.
func (h *harness) installed(t testing.TB, id int64) {
	t.Helper()
	code, out, _ := h.deliver(t, "installation", example(t, "installation-created", id))
	require.Equal(t, http.StatusOK, code, "%v", out)
}

// installedNow delivers the installation example created as installation id, made now.
func (h *harness) installedNow(t testing.TB, id int64) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, json.Unmarshal(example(t, "installation-created", id), &doc))
	doc["installation"].(map[string]any)["created_at"] = h.clock.Now().Unix()
	created, err := json.Marshal(doc)
	require.NoError(t, err)
	code, out, _ := h.deliver(t, "installation", created)
	require.Equal(t, http.StatusOK, code, "%v", out)
}

// linked installs installation id and links it to team as an admin.
func (h *harness) linked(t testing.TB, id int64, team string) {
	t.Helper()
	h.installed(t, id)
	code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", admin, nil, fmt.Appendf(nil, `{"installationId":%d,"team":%q}`, id, team))
	require.Equal(t, http.StatusOK, code, "%v", out)
}

func (h *harness) setWorkflows(team string, ws ...workflowsapi.TriggeredWorkflow) {
	h.workflows.mu.Lock()
	defer h.workflows.mu.Unlock()
	h.workflows.m[team] = ws
}

func flow(name string, conds ...workflowsapi.Condition) workflowsapi.TriggeredWorkflow {
	return workflowsapi.TriggeredWorkflow{Name: name, Status: "active", Version: 1, Trigger: workflowsapi.Trigger{Enabled: true, Conditions: conds}}
}

func runIDs(out map[string]any) []string {
	var ids []string
	runs, _ := out["runs"].([]any)
	for _, r := range runs {
		ids = append(ids, r.(map[string]any)["id"].(string))
	}
	return ids
}

func reason(out any) string {
	m, _ := out.(map[string]any)
	s, _ := m["reason"].(string)
	return s
}

func TestCodeHostDeliverySignature(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.linked(t, exampleInstallation, "ops")
	h.setWorkflows("ops", flow("build"))
	push := example(t, "push", 0)
	tests := []struct {
		name       string
		headers    map[string]string
		body       []byte
		secret     string
		wantStatus int
		wantReason string
	}{
		{"signed, vendor headers", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}, push, secret, http.StatusOK, ""},
		{"signed, contract headers", map[string]string{"X-Host-Event": "push", "X-Host-Signature-256": sign(push)}, push, secret, http.StatusOK, ""},
		{"missing signature", map[string]string{"X-GitHub-Event": "push"}, push, secret, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"signature of another body", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign([]byte("{}"))}, push, secret, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"body changed after signing", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}, bytes.Replace(push, []byte("simple-tag"), []byte("simple-tog"), 1), secret, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"malformed signature", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=not-hex"}, push, secret, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"sha1 signature only", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature": "sha1=0000"}, push, secret, http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"signed with another secret", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}, push, "another secret", http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"no secret configured", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}, push, "", http.StatusNotFound, "INTEGRATION_NOT_LINKED"},
		{"signed, not JSON", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign([]byte(`{"ref":`))}, []byte(`{"ref":`), secret, http.StatusBadRequest, "REQUEST_INVALID"},
		{"signed, JSON but not an object", map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign([]byte(`[1]`))}, []byte(`[1]`), secret, http.StatusBadRequest, "REQUEST_INVALID"},
		{"signed, an odd event name", map[string]string{"X-GitHub-Event": "Push Event!", "X-Hub-Signature-256": sign(push)}, push, secret, http.StatusBadRequest, "REQUEST_INVALID"},
	}
	for _, tt := range tests {
		// One at a time: each changes the secret the settings answer.
		h.settings.mu.Lock()
		h.settings.st.CodeHost.WebhookSecret = tt.secret
		h.settings.mu.Unlock()
		before := h.runs.count()
		h.deliveryN++
		code, out := h.deliverAs(t, fmt.Sprintf("sig-%d", h.deliveryN), tt.headers, tt.body)
		assert.Equal(t, tt.wantStatus, code, "%s: %v", tt.name, out)
		if tt.wantStatus != http.StatusOK {
			assert.Equal(t, tt.wantReason, reason(out), tt.name)
			assert.Equal(t, before, h.runs.count(), "%s: nothing runs", tt.name)
			continue
		}
		assert.Equal(t, before+1, h.runs.count(), "%s: one run", tt.name)
	}

	// Without a delivery id a delivery cannot be told from its replays.
	h.settings.mu.Lock()
	h.settings.st.CodeHost.WebhookSecret = secret
	h.settings.mu.Unlock()
	code, out := h.do(t, http.MethodPost, "/api/v2/webhook", nobody, map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}, push)
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)

	// Ping: verified, answered, runs nothing.
	ping := []byte(`{"zen":"Design for failure.","hook_id":42}`)
	before := h.runs.count()
	code, res, _ := h.deliver(t, "ping", ping)
	assert.Equal(t, http.StatusOK, code, "%v", res)
	assert.Empty(t, runIDs(res))
	assert.Equal(t, before, h.runs.count())
}

func TestCodeHostDeliveryRuns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.linked(t, exampleInstallation, "ops")
	inactive := flow("retired")
	inactive.Status = "inactive"
	h.setWorkflows("ops",
		flow("any"),
		flow("tags", workflowsapi.Condition{Field: "$.ref", Operation: "matches", Value: "refs/tags/.*"}),
		flow("main-only", workflowsapi.Condition{Field: "ref", Operation: "equals", Value: "refs/heads/main"}),
		flow("opened-prs", workflowsapi.Condition{Field: "$.action", Operation: "in", Values: []string{"opened", "reopened"}},
			workflowsapi.Condition{Field: "$.pull_request.base.ref", Operation: "equals", Value: "master"}),
		inactive,
	)

	code, out, delivery := h.deliver(t, "push", example(t, "push", 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, runIDs(out), 2, "any and tags: main-only's and opened-prs' conditions do not hold, retired is inactive")
	require.Len(t, h.runs.reqs, 2)
	req := h.runs.reqs[0]
	assert.Equal(t, "codehost", req.Trigger)
	assert.Equal(t, "push", req.Params["event"])
	data := req.Params["data"].(map[string]any)
	assert.Equal(t, "refs/tags/simple-tag", data["ref"])
	assert.Equal(t, "Codertocat/Hello-World", data["repository"].(map[string]any)["full_name"])
	assert.Equal(t, runsapi.Initiator{Type: "codehost", ID: "1", Name: "Codertocat"}, req.InitiatedBy)
	assert.Equal(t, domain.RunKey(delivery, "any"), req.IdempotencyKey)
	run := out["runs"].([]any)[0].(map[string]any)
	assert.Equal(t, "codehost", run["trigger"])

	code, out, _ = h.deliver(t, "pull_request", example(t, "pull_request-opened", 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, runIDs(out), 2, "any and opened-prs")
	assert.Equal(t, "pull_request", h.runs.reqs[3].Params["event"])

	// Another installation's deliveries run nothing: unknown, known but not linked, suspended.
	code, out, _ = h.deliver(t, "push", example(t, "push", 555))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, runIDs(out))
	h.installed(t, 556)
	code, out, _ = h.deliver(t, "push", example(t, "push", 556))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, runIDs(out))
	code, out, _ = h.deliver(t, "installation", []byte(`{"action":"suspend","installation":{"id":1}}`))
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = h.deliver(t, "push", example(t, "push", 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Empty(t, runIDs(out), "suspended")
	code, out, _ = h.deliver(t, "installation", []byte(`{"action":"unsuspend","installation":{"id":1}}`))
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = h.deliver(t, "push", example(t, "push", 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, runIDs(out), 2, "unsuspended")
	assert.Equal(t, 6, h.runs.count())
}

func TestCodeHostDeliveryReplays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.linked(t, exampleInstallation, "ops")
	h.setWorkflows("ops", flow("build"), flow("deploy"))
	h.runs.refuse["deploy"] = apperr.New(apperr.QuotaExceeded, "Team 'ops' has used its 10 runs for this month.")
	push := example(t, "push", 0)
	headers := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}

	code, first := h.deliverAs(t, "replayed-1", headers, push)
	require.Equal(t, http.StatusOK, code, "%v", first)
	require.Len(t, runIDs(first), 1, "deploy refused, build run")
	refused := first["refused"].([]any)
	require.Len(t, refused, 1)
	assert.Equal(t, map[string]any{"team": "ops", "workflow": "deploy", "status": float64(429), "reason": "QUOTA_EXCEEDED",
		"message": "Team 'ops' has used its 10 runs for this month."}, refused[0])

	// The same delivery again, even with the quota freed and a new workflow enabled,
	// answers what it did and runs nothing new.
	delete(h.runs.refuse, "deploy")
	h.setWorkflows("ops", flow("build"), flow("deploy"), flow("new"))
	code, again := h.deliverAs(t, "replayed-1", headers, push)
	require.Equal(t, http.StatusOK, code, "%v", again)
	assert.Equal(t, runIDs(first), runIDs(again))
	assert.Equal(t, refused, again["refused"])
	assert.Equal(t, true, again["replayed"])
	assert.Equal(t, 1, h.runs.count())

	// A replayed installation event is not applied again: the installation deleted since
	// stays deleted.
	created := example(t, "installation-created", 77)
	iheaders := map[string]string{"X-GitHub-Event": "installation", "X-Hub-Signature-256": sign(created)}
	code, out := h.deliverAs(t, "install-77", iheaders, created)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out, _ = h.deliver(t, "installation", []byte(`{"action":"deleted","installation":{"id":77}}`))
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = h.deliverAs(t, "install-77", iheaders, created)
	require.Equal(t, http.StatusOK, code, "%v", out)
	in, err := h.store.FindInstallation(context.Background(), 77)
	require.NoError(t, err)
	assert.Equal(t, domain.InstallationDeleted, in.Status)

	// Past a day the record no longer answers: the delivery is handled as new.
	h.clock.Add(domain.DeliveryTTL + time.Minute)
	code, out = h.deliverAs(t, "replayed-1", headers, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Nil(t, out["replayed"])
	require.NoError(t, h.store.PurgeDeliveries(context.Background(), h.clock.Now().Add(-time.Second)))
	_, found, err := h.store.FindDelivery(context.Background(), "install-77")
	require.NoError(t, err)
	assert.False(t, found, "purged")
}

// A delivery the runs service could not take is not recorded: delivered again, it starts
// each run once.
func TestCodeHostDeliveryRunsDown(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.linked(t, exampleInstallation, "ops")
	h.setWorkflows("ops", flow("build"), flow("deploy"))
	push := example(t, "push", 0)
	headers := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}
	h.runs.mu.Lock()
	h.runs.down = true
	h.runs.mu.Unlock()
	code, out := h.deliverAs(t, "down-1", headers, push)
	assert.Equal(t, http.StatusServiceUnavailable, code, "%v", out)
	h.runs.mu.Lock()
	h.runs.down = false
	h.runs.mu.Unlock()
	code, out = h.deliverAs(t, "down-1", headers, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, runIDs(out), 2)
	code, out = h.deliverAs(t, "down-1", headers, push)
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Len(t, runIDs(out), 2)
	assert.Equal(t, 2, h.runs.count())
}

func TestCodeHostInstallationEvents(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	code, out, _ := h.deliver(t, "installation", example(t, "installation-created", 0))
	require.Equal(t, http.StatusOK, code, "%v", out)
	in, err := h.store.FindInstallation(ctx, 957387)
	require.NoError(t, err)
	assert.True(t, in.Known)
	assert.Equal(t, domain.InstallationActive, in.Status)
	assert.Equal(t, "Codertocat", in.AccountLogin)
	assert.Equal(t, "User", in.AccountType)
	assert.Equal(t, []string{"Codertocat/Hello-World"}, in.Repositories)

	code, out, _ = h.deliver(t, "installation_repositories", []byte(`{"action":"added","installation":{"id":957387},
		"repositories_added":[{"id":2,"full_name":"Codertocat/Goodbye-World"}],"repositories_removed":[]}`))
	require.Equal(t, http.StatusOK, code, "%v", out)
	in, err = h.store.FindInstallation(ctx, 957387)
	require.NoError(t, err)
	assert.Equal(t, []string{"Codertocat/Hello-World", "Codertocat/Goodbye-World"}, in.Repositories)

	code, linked := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", owner, nil, []byte(`{"installationId":957387,"team":"ops"}`))
	require.Equal(t, http.StatusOK, code, "%v", linked)
	// The deleted example is installation 2's; delivered for 957387 it unlinks it.
	code, out, _ = h.deliver(t, "installation", example(t, "installation-deleted", 957387))
	require.Equal(t, http.StatusOK, code, "%v", out)
	in, err = h.store.FindInstallation(ctx, 957387)
	require.NoError(t, err)
	assert.Equal(t, domain.InstallationDeleted, in.Status)
	assert.Empty(t, in.Team)
	list := h.list(t, owner, "ops")
	assert.Equal(t, "unlinked", list["codehost"]["status"])

	code, out, _ = h.deliver(t, "installation", []byte(`{"action":"created","installation":{}}`))
	assert.Equal(t, http.StatusBadRequest, code, "%v", out)
}

func TestCodeHostLinkPrincipals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installed(t, 100)
	tests := []struct {
		name       string
		p          auth.Principal
		team       string
		wantStatus int
		wantReason string
	}{
		{"anonymous", nobody, "ops", http.StatusUnauthorized, "UNAUTHENTICATED"},
		{"editor", editor, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"reader", reader, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"another team's owner", outsider, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"team token with every permission", opsToken, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"global token with every permission", global, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"owner's token narrowed to reading workflows", narrowed, "ops", http.StatusForbidden, "PERMISSION_DENIED"},
		{"unknown team", admin, "ghost", http.StatusNotFound, "TEAM_NOT_FOUND"},
		{"owner", owner, "ops", http.StatusOK, ""},
		{"owner's session, again", session, "ops", http.StatusOK, ""},
	}
	for _, tt := range tests {
		code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", tt.p, nil, fmt.Appendf(nil, `{"installationId":100,"team":%q}`, tt.team))
		assert.Equal(t, tt.wantStatus, code, "%s: %v", tt.name, out)
		if tt.wantReason != "" {
			assert.Equal(t, tt.wantReason, reason(out), tt.name)
			continue
		}
		assert.Equal(t, map[string]any{"installationId": float64(100), "team": "ops", "status": "linked"}, out, tt.name)
	}

	// Another team's owner cannot take it; an admin can move it.
	code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", devOwner, nil, []byte(`{"installationId":100,"team":"dev"}`))
	assert.Equal(t, http.StatusConflict, code, "%v", out)
	assert.Equal(t, "INTEGRATION_ALREADY_LINKED", reason(out))
	code, out = h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", admin, nil, []byte(`{"installationId":"100","team":"dev"}`))
	assert.Equal(t, http.StatusOK, code, "%v", out)

	// Proof of the installation: unknown, suspended and deleted ones are not linked.
	h.installed(t, 101)
	_, _, _ = h.deliver(t, "installation", []byte(`{"action":"suspend","installation":{"id":101}}`))
	h.installed(t, 102)
	_, _, _ = h.deliver(t, "installation", []byte(`{"action":"deleted","installation":{"id":102}}`))
	for _, id := range []int{999, 101, 102} {
		code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", owner, nil, fmt.Appendf(nil, `{"installationId":%d,"team":"ops"}`, id))
		assert.Equal(t, http.StatusNotFound, code, "%d: %v", id, out)
		assert.Equal(t, "INTEGRATION_NOT_LINKED", reason(out), id)
	}

	// Validation.
	for _, body := range []string{`{"installationId":"abc","team":"ops"}`, `{"installationId":0,"team":"ops"}`, `{"installationId":1.5,"team":"ops"}`,
		`{"installationId":100}`, `{"team":"ops"}`, `{"installationId":100,"team":"ops"`} {
		code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/link", owner, nil, []byte(body))
		assert.Equal(t, http.StatusBadRequest, code, "%s: %v", body, out)
	}

	// Unlink: the dev team's owner unlinks it from dev; then it is not linked there.
	for _, p := range []auth.Principal{editor, opsToken} {
		code, out := h.do(t, http.MethodPost, "/api/v2/integration/codehost/unlink", p, nil, []byte(`{"installationId":100,"team":"dev"}`))
		assert.Equal(t, http.StatusForbidden, code, "%v", out)
	}
	code, out = h.do(t, http.MethodPost, "/api/v2/integration/codehost/unlink", owner, nil, []byte(`{"installationId":100,"team":"ops"}`))
	assert.Equal(t, http.StatusNotFound, code, "linked to dev, not ops: %v", out)
	code, out = h.do(t, http.MethodPost, "/api/v2/integration/codehost/unlink", devOwner, nil, []byte(`{"installationId":100,"team":"dev"}`))
	assert.Equal(t, http.StatusNoContent, code, "%v", out)
	code, out = h.do(t, http.MethodPost, "/api/v2/integration/codehost/unlink", devOwner, nil, []byte(`{"installationId":100,"team":"dev"}`))
	assert.Equal(t, http.StatusNotFound, code, "%v", out)
	assert.Equal(t, "INTEGRATION_NOT_LINKED", reason(out))
}

// list answers GET /integration?team= as p, by integration id.
func (h *harness) list(t *testing.T, p auth.Principal, team string) map[string]map[string]any {
	t.Helper()
	code, out := h.do(t, http.MethodGet, "/api/v2/integration?team="+team, p, nil, nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	byID := map[string]map[string]any{}
	for _, v := range out.([]any) {
		m := v.(map[string]any)
		byID[m["id"].(string)] = m
	}
	return byID
}

func TestCodeHostIntegrationList(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tests := []struct {
		name       string
		p          auth.Principal
		team       string
		wantStatus int
		wantLink   bool
	}{
		{"anonymous", nobody, "ops", http.StatusUnauthorized, false},
		{"no team", owner, "", http.StatusBadRequest, false},
		{"unknown team", owner, "ghost", http.StatusNotFound, false},
		{"another team's owner", outsider, "ops", http.StatusForbidden, false},
		{"reader", reader, "ops", http.StatusOK, false},
		{"editor", editor, "ops", http.StatusOK, false},
		{"team token", opsToken, "ops", http.StatusOK, false},
		{"owner", owner, "ops", http.StatusOK, true},
		{"owner's session", session, "ops", http.StatusOK, true},
		{"admin", admin, "ops", http.StatusOK, true},
	}
	for _, tt := range tests {
		code, out := h.do(t, http.MethodGet, "/api/v2/integration?team="+tt.team, tt.p, nil, nil)
		require.Equal(t, tt.wantStatus, code, "%s: %v", tt.name, out)
		if code != http.StatusOK {
			continue
		}
		list := out.([]any)
		require.Len(t, list, 2, tt.name)
		host := list[0].(map[string]any)
		assert.Equal(t, "codehost", host["id"])
		assert.Equal(t, "unlinked", host["status"])
		assert.NotEmpty(t, host["instructions"])
		link, _ := host["link"].(string)
		if !tt.wantLink {
			assert.Empty(t, link, tt.name)
			continue
		}
		assert.True(t, strings.HasPrefix(link, appURL+"/installations/new?state="), link)
	}

	h.linked(t, 300, "ops")
	h.linked(t, 200, "ops")
	list := h.list(t, reader, "ops")
	assert.Equal(t, "linked", list["codehost"]["status"])
	assert.Equal(t, "200,300", list["codehost"]["ref"])
	assert.Equal(t, "unlinked", list["chat"]["status"])
	h.settings.mu.Lock()
	h.settings.st.Chat.BotToken = "xoxb-not-shown"
	h.settings.mu.Unlock()
	list = h.list(t, reader, "ops")
	assert.Equal(t, "linked", list["chat"]["status"])
	assert.NotContains(t, fmt.Sprint(list), "xoxb")

	// A deleted team's links go.
	require.NoError(t, h.codehost.TeamDeleted(context.Background(), "ops"))
	assert.Equal(t, "unlinked", h.list(t, reader, "ops")["codehost"]["status"])
}

// state answers the signed state of the install link p gets for team.
func (h *harness) state(t *testing.T, p auth.Principal, team string) string {
	t.Helper()
	link, err := url.Parse(h.list(t, p, team)["codehost"]["link"].(string))
	require.NoError(t, err)
	st := link.Query().Get("state")
	require.NotEmpty(t, st)
	return st
}

func TestCodeHostInstallFlow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	land := func(query string) (int, any) {
		return h.do(t, http.MethodGet, "/api/v2/integration/codehost/installation?"+query, nobody, nil, nil)
	}

	// The code host sends the browser back with installation_id and setup_action.
	st := h.state(t, owner, "ops")
	h.installedNow(t, 400)
	code, out := land("installation_id=400&setup_action=install&state=" + url.QueryEscape(st))
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, map[string]any{"installationId": float64(400), "team": "ops", "status": "linked"}, out)
	in, err := h.store.FindInstallation(context.Background(), 400)
	require.NoError(t, err)
	assert.Equal(t, "u-owner", in.LinkedBy)
	code, out = land("id=400&team=ops&state=" + url.QueryEscape(st))
	assert.Equal(t, http.StatusOK, code, "landing twice is fine: %v", out)

	// The landing before the installation's first delivery: linked, and its deliveries
	// run once the code host has told of it.
	code, out = land("installation_id=401&setup_action=install&state=" + url.QueryEscape(st))
	require.Equal(t, http.StatusOK, code, "%v", out)
	h.setWorkflows("ops", flow("build"))
	code, res, _ := h.deliver(t, "push", example(t, "push", 401))
	require.Equal(t, http.StatusOK, code, "%v", res)
	assert.Empty(t, runIDs(res), "not known from the code host yet")
	h.installedNow(t, 401)
	code, res, _ = h.deliver(t, "push", example(t, "push", 401))
	require.Equal(t, http.StatusOK, code, "%v", res)
	assert.Len(t, runIDs(res), 1)

	// A pending landing for an installation made long before the flow is dropped when the
	// installation's creation becomes known (the example's installation is from 2019).
	code, out = land("installation_id=402&state=" + url.QueryEscape(st))
	require.Equal(t, http.StatusOK, code, "%v", out)
	h.installed(t, 402)
	in, err = h.store.FindInstallation(context.Background(), 402)
	require.NoError(t, err)
	assert.Empty(t, in.Team)

	tests := []struct {
		name       string
		query      string
		wantStatus int
		wantReason string
	}{
		{"no state", "installation_id=403", http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"forged state", "installation_id=403&state=" + url.QueryEscape(forge(st, "dev")), http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"garbage state", "installation_id=403&state=abc.def", http.StatusUnauthorized, "INTEGRATION_INVALID_SIGNATURE"},
		{"no installation", "state=" + url.QueryEscape(st), http.StatusBadRequest, "REQUEST_INVALID"},
		{"installation not a number", "installation_id=abc&state=" + url.QueryEscape(st), http.StatusBadRequest, "REQUEST_INVALID"},
		{"another team than the state's", "installation_id=403&team=dev&state=" + url.QueryEscape(st), http.StatusBadRequest, "REQUEST_INVALID"},
		{"an installation made before the flow", "installation_id=402&state=" + url.QueryEscape(st), http.StatusForbidden, "PERMISSION_DENIED"},
	}
	for _, tt := range tests {
		code, out := land(tt.query)
		assert.Equal(t, tt.wantStatus, code, "%s: %v", tt.name, out)
		assert.Equal(t, tt.wantReason, reason(out), tt.name)
	}

	// Linked to another team: a flow of dev cannot take it.
	devState := h.state(t, devOwner, "dev")
	code, out = land("installation_id=400&state=" + url.QueryEscape(devState))
	assert.Equal(t, http.StatusConflict, code, "%v", out)

	// Expired.
	h.clock.Add(domain.StateTTL)
	code, out = land("installation_id=403&state=" + url.QueryEscape(st))
	assert.Equal(t, http.StatusUnauthorized, code, "%v", out)
}

// forge returns st with its payload naming team instead, under the original signature.
func forge(st, team string) string {
	body, mac, _ := strings.Cut(st, ".")
	raw, _ := base64URL.DecodeString(body)
	exp, payload, _ := strings.Cut(string(raw), ".")
	var m map[string]any
	_ = json.Unmarshal([]byte(payload), &m)
	m["t"] = team
	js, _ := json.Marshal(m)
	return base64URL.EncodeToString([]byte(exp+"."+string(js))) + "." + mac
}

// Installation events delivered at once each land: the record's conditional writes retry
// what a concurrent one changed.
func TestCodeHostInstallationEventsConcurrent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.installed(t, 500)
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = fmt.Appendf(nil, `{"action":"added","installation":{"id":500},"repositories_added":[{"full_name":"Codertocat/repo-%d"}],"repositories_removed":[]}`, i)
	}
	for i := range n {
		wg.Go(func() {
			codes[i], _ = h.deliverAs(t, fmt.Sprintf("concurrent-%d", i), map[string]string{"X-GitHub-Event": "installation_repositories", "X-Hub-Signature-256": sign(bodies[i])}, bodies[i])
		})
	}
	wg.Wait()
	for i, code := range codes {
		assert.Equal(t, http.StatusOK, code, i)
	}
	in, err := h.store.FindInstallation(context.Background(), 500)
	require.NoError(t, err)
	assert.Len(t, in.Repositories, n+1, "%v", in.Repositories)
}
