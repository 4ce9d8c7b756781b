package runs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runs"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const testKey = "runs-test-key-0123456789abcdef"

var (
	owner    = member("u-owner", "Olive Owner", "infra", auth.RoleOwner)
	reader   = member("u-reader", "Rita Reader", "infra", auth.RoleReader)
	outsider = member("u-outsider", "Otto Outsider", "other", auth.RoleOwner)
	service  = auth.Principal{Type: auth.TypeService, ID: "runner", Name: "runner"}
)

func member(id, name, team, role string) auth.Principal {
	return auth.Principal{Type: auth.TypeUser, ID: id, Name: name, Teams: map[string]string{team: role}}
}

// fakeDefs serves workflow versions as the workflows service would.
type fakeDefs struct {
	mu   sync.Mutex
	defs map[string][]json.RawMessage
}

func (f *fakeDefs) put(team string, def map[string]any) {
	raw, _ := json.Marshal(def)
	f.mu.Lock()
	defer f.mu.Unlock()
	key := team + "/" + def["name"].(string)
	f.defs[key] = append(f.defs[key], raw)
}

func (f *fakeDefs) Snapshot(_ context.Context, team, name string, version int) (*domain.Definition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	versions := f.defs[team+"/"+name]
	if len(versions) == 0 {
		return nil, apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found.", name)
	}
	if version == 0 {
		version = len(versions)
	}
	if version > len(versions) {
		return nil, apperr.New(apperr.WorkflowRevisionNotFound, "no version %d", version)
	}
	var def domain.Definition
	if err := json.Unmarshal(versions[version-1], &def); err != nil {
		return nil, err
	}
	def.Version = version
	return &def, nil
}

type fakeCatalogue struct{}

func (fakeCatalogue) TaskSpec(_ context.Context, ref string, version int) (*domain.Spec, int, error) {
	if ref == "notify" {
		return &domain.Spec{Script: "curl -d hi $(params.webhookUrl)", Params: []domain.Param{{Name: "webhookUrl", Type: "password", Required: true}}}, 1, nil
	}
	if ref != "echo" {
		return nil, 0, apperr.New(apperr.TaskNotFound, "Task '%s' was not found.", ref)
	}
	return &domain.Spec{Script: "echo $(params.message)", Params: []domain.Param{{Name: "message", Default: json.RawMessage(`"hi"`)}},
		Results: []domain.NamedRef{{Name: "out"}}}, 1, nil
}

// fakeContexts answers every team's run context, with limits a test may lower.
type fakeContexts struct {
	mu sync.Mutex
	tc map[string]runs.TeamContext
}

func (f *fakeContexts) RunContext(_ context.Context, team string) (runs.TeamContext, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if tc, ok := f.tc[team]; ok {
		return tc, nil
	}
	return runs.TeamContext{
		Global: map[string]any{"region": "eu", "token": "s3cr3t-value"}, Team: map[string]any{"region": "us-east"},
		Secrets: []string{"global.token"}, MaxMonthly: 100000, MaxDuration: 60, MaxConcurrent: 100, TaskDefaultTimeout: 10,
	}, nil
}

// testSecretKey seals the runs' secrets in these tests.
const testSecretKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

type fixture struct {
	app    *fiber.App
	signer *auth.Signer
	kafka  kafkax.Config
	prod   *kafkax.Producer
	db     *mongo.Database
	defs   *fakeDefs
	ctxs   *fakeContexts
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	db := client.Database(testkit.Database(t))
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 2, events.TaskDispatch, events.TaskUpdates, events.RunEvents, events.TeamEvents))
	prod := kafkax.NewProducer(kcfg)
	signer, err := auth.NewSigner([]byte(testKey))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &fixture{signer: signer, kafka: kcfg, prod: prod, db: db,
		defs: &fakeDefs{defs: map[string][]json.RawMessage{}}, ctxs: &fakeContexts{tc: map[string]runs.TeamContext{}}}
	svc, err := runs.New(ctx, runs.Config{GroupID: kcfg.TopicPrefix + "runs", Reconcile: 100 * time.Millisecond,
		ReplicaTimeout: time.Second, PublicURL: "https://baton.example", SecretKey: testSecretKey}, runs.Deps{
		DB: db, Kafka: kcfg, Publisher: prod, Signer: signer, Logger: logger,
		Definitions: f.defs, Catalogue: fakeCatalogue{}, Contexts: f.ctxs,
	})
	require.NoError(t, err)
	f.app = httpx.NewApp(httpx.Config{Name: "runs", Logger: logger, BodyLimit: httpx.LargeBodyLimit, NoTracing: true})
	svc.Routes(f.app)
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = prod.Close()
		_ = client.Disconnect(context.Background())
	})
	return f
}

type response struct {
	code   int
	header http.Header
	raw    []byte
	body   map[string]any
}

func (f *fixture) do(t testing.TB, p auth.Principal, method, path string, body any) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	require.NoError(t, f.signer.SetHeaders(p, req.Header.Set))
	res, err := f.app.Test(req, 30_000)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	r := response{code: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func (f *fixture) must(t testing.TB, code int, p auth.Principal, method, path string, body any) response {
	t.Helper()
	r := f.do(t, p, method, path, body)
	require.Equal(t, code, r.code, "%s %s: %s", method, path, r.raw)
	return r
}

// waitRun polls a run until cond holds, or fails the test after a deadline.
func (f *fixture) waitRun(t testing.TB, team, id string, cond func(run map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last map[string]any
	for time.Now().Before(deadline) {
		r := f.do(t, owner, http.MethodGet, fmt.Sprintf("/api/v2/team/%s/workflowrun/%s", team, id), nil)
		if r.code == http.StatusOK {
			last = r.body
			if cond(r.body) {
				return r.body
			}
		}
		<-time.After(20 * time.Millisecond)
	}
	t.Fatalf("run %s never reached the condition; last: %v", id, last)
	return nil
}

func completed(run map[string]any) bool { return run["phase"] == "completed" }

// publishUpdate reports on an attempt as a runner does.
func (f *fixture) publishUpdate(t testing.TB, u events.TaskUpdate) {
	t.Helper()
	u.Time = time.Now().UTC()
	e, err := events.New(fmt.Sprintf("%s/%d/%s/%d", u.TaskRunID, u.Attempt, u.Kind, u.Seq), events.Source("runner"), events.TypeTaskUpdate, "", u)
	require.NoError(t, err)
	require.NoError(t, f.prod.Publish(context.Background(), events.TaskUpdates, u.RunID, e))
}

// consumer reads a topic from its start in a group of its own.
func (f *fixture) consume(t testing.TB, topic string, until func(e event.Event) bool) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []event.Event
	done := make(chan struct{})
	c := kafkax.NewConsumer(f.kafka, kafkax.ConsumerOptions{GroupID: fmt.Sprintf("%s-%d", topic, time.Now().UnixNano()), Topic: topic,
		Handler: func(_ context.Context, e event.Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e)
			if until(e) {
				select {
				case <-done:
				default:
					close(done)
				}
			}
			return nil
		}})
	go func() { _ = c.Run(ctx) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("topic %s: condition not met; got %d events", topic, len(got))
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	return append([]event.Event(nil), got...)
}

// chain is a workflow start → tasks... → end where each task depends on the one before.
func chain(name string, tasks ...map[string]any) map[string]any {
	all := []map[string]any{{"name": "start", "type": "start"}}
	prev := "start"
	for _, t := range tasks {
		t["dependencies"] = []map[string]any{{"taskRef": prev}}
		prev = t["name"].(string)
		all = append(all, t)
	}
	all = append(all, map[string]any{"name": "end", "type": "end", "dependencies": []map[string]any{{"taskRef": prev}}})
	return map[string]any{"name": name, "status": "active", "tasks": all}
}

// named is the contract's list of params or results, {name, value} each, from names and
// values given in turn, in name order as runs answer them.
func named(pairs ...any) []any {
	out := []any{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"name": pairs[i], "value": pairs[i+1]})
	}
	return out
}

// valueOf is the value named name in a list of params or results, failing when absent.
func valueOf(t testing.TB, list any, name string) any {
	t.Helper()
	items, ok := list.([]any)
	require.True(t, ok, "not a list: %v", list)
	for _, item := range items {
		if nv, ok := item.(map[string]any); ok && nv["name"] == name {
			return nv["value"]
		}
	}
	require.Failf(t, "no such value", "%q in %v", name, list)
	return nil
}

func prop(name, output, value string) map[string]any {
	return map[string]any{"name": name, "type": "setwfproperty", "params": []map[string]any{
		{"name": "output", "value": output}, {"name": "value", "value": value}}}
}
