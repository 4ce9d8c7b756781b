package workflows_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/libs/outbox/mongorelay"
	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/workflows"
	"github.com/baton-flow/baton/services/workflows/internal/app"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// testKey is the service key of fixtures, for fakes of other services that verify it.
const testKey = "workflows-test-key-0123456789"

// The principals tests act as: an instance admin, the three team roles of "infra", and the
// owner of another team.
var (
	admin    = auth.Principal{Type: auth.TypeUser, ID: "u-admin", Name: "Ada Admin", Roles: []string{auth.RoleAdmin}}
	owner    = member("u-owner", "Olive Owner", "infra", auth.RoleOwner)
	editor   = member("u-editor", "Eddie Editor", "infra", auth.RoleEditor)
	reader   = member("u-reader", "Rita Reader", "infra", auth.RoleReader)
	outsider = member("u-outsider", "Otto Outsider", "other", auth.RoleOwner)
)

func member(id, name, team, role string) auth.Principal {
	return auth.Principal{Type: auth.TypeUser, ID: id, Name: name, Teams: map[string]string{team: role}}
}

// fixture is a workflows service on the shared Mongo and Kafka, in a database and topics of
// its own, knowing the teams "infra" and "other".
type fixture struct {
	app      *fiber.App
	signer   *auth.Signer
	kafka    kafkax.Config
	producer *kafkax.Producer
	db       *mongo.Database
	// path is the service's SQLite file, when it runs on one.
	path  string
	tasks *fakeTasks
}

type fixtureOptions struct {
	quota workflows.QuotaSource
	tasks workflows.TaskResolver
	// store is what the service keeps its data in: onMongo (the default) or onSQLite.
	store string
}

func newFixture(t testing.TB, opts fixtureOptions) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	db := client.Database(testkit.Database(t))
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TeamEvents, events.WorkflowEvents))
	producer := kafkax.NewProducer(kcfg)
	signer, err := auth.NewSigner([]byte(testKey))
	require.NoError(t, err)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	fake := newFakeTasks()
	deps := workflows.Deps{
		DB: db, Kafka: kcfg, Publisher: producer, Signer: signer, Logger: logger,
		Tasks: fake, Params: fakeParams{}, Quotas: opts.quota,
	}
	if opts.tasks != nil {
		deps.Tasks = opts.tasks
	}
	var path string
	if opts.store == onSQLite {
		path = filepath.Join(t.TempDir(), "workflows.db")
	}
	svc, err := workflows.New(ctx, workflows.Config{
		GroupID: kcfg.TopicPrefix + "workflows", Outbox: mongorelay.Config{Interval: 100 * time.Millisecond}, SecretKey: testSecretKey,
		DatabaseURL: map[bool]string{true: "sqlite:" + path}[path != ""],
	}, deps)
	require.NoError(t, err)
	app := httpx.NewApp(httpx.Config{Name: "workflows", Logger: logger, BodyLimit: httpx.LargeBodyLimit, NoTracing: true})
	svc.Routes(app)
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = producer.Close()
		_ = client.Disconnect(context.Background())
	})
	f := &fixture{app: app, signer: signer, kafka: kcfg, producer: producer, db: db, path: path, tasks: fake}
	for _, team := range []string{"infra", "other"} {
		f.publishTeam(t, events.TypeTeamCreated, events.TeamCreated{ID: "id-" + team, Name: team, DisplayName: team, CreationDate: time.Now().UTC()})
	}
	for _, team := range []string{"infra", "other"} {
		f.waitTeam(t, team, "id-"+team)
	}
	return f
}

// publishTeam announces a team change as identity does.
func (f *fixture) publishTeam(t testing.TB, typ string, data any) {
	t.Helper()
	var name, id string
	switch d := data.(type) {
	case events.TeamCreated:
		name, id = d.Name, d.ID
	case events.TeamDeleted:
		name, id = d.Name, d.ID
	}
	e, err := events.New(typ+"-"+id, events.Source("identity"), typ, "/team/"+name, data)
	require.NoError(t, err)
	require.NoError(t, f.producer.Publish(context.Background(), events.TeamEvents, name, e))
}

// response is an answer: its status, headers, raw body and the body decoded.
type response struct {
	code   int
	header http.Header
	raw    []byte
	body   map[string]any
	list   []any
}

// call sends a request as p with a JSON body (a string, or a value to encode).
func (f *fixture) call(t testing.TB, p auth.Principal, method, path string, body any) response {
	t.Helper()
	out := f.do(t, p, method, path, body)
	if len(out.raw) > 0 {
		if out.raw[0] == '[' {
			require.NoError(t, json.Unmarshal(out.raw, &out.list), string(out.raw))
		} else {
			require.NoError(t, json.Unmarshal(out.raw, &out.body), string(out.raw))
		}
	}
	return out
}

// do sends a request and leaves the answer undecoded, so benchmarks time the service, not
// the client.
func (f *fixture) do(t testing.TB, p auth.Principal, method, path string, body any) response {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = bytes.NewBufferString(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		r = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Content-Type", "application/json")
	require.NoError(t, f.signer.SetHeaders(p, req.Header.Set))
	resp, err := f.app.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	out := response{code: resp.StatusCode, header: resp.Header}
	out.raw, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	return out
}

// send is do expecting status want.
func (f *fixture) send(t testing.TB, want int, p auth.Principal, method, path string, body any) {
	t.Helper()
	res := f.do(t, p, method, path, body)
	require.Equal(t, want, res.code, "%s %s: %s", method, path, res.raw)
}

// must is call expecting status want.
func (f *fixture) must(t testing.TB, want int, p auth.Principal, method, path string, body any) response {
	t.Helper()
	res := f.call(t, p, method, path, body)
	require.Equal(t, want, res.code, "%s %s: %s", method, path, res.raw)
	return res
}

func waitFor(t testing.TB, db *mongo.Database, filter bson.M) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := db.Collection("teams").CountDocuments(context.Background(), filter)
		return err == nil && n == 1
	}, 30*time.Second, 10*time.Millisecond, "team record %v", filter)
}

// consume reads n events of the workflow topic.
func consume(t testing.TB, cfg kafkax.Config, n int) []event.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var got []event.Event
	c := kafkax.NewConsumer(cfg, kafkax.ConsumerOptions{
		GroupID: cfg.TopicPrefix + "reader", Topic: events.WorkflowEvents,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler: func(_ context.Context, e event.Event) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, e)
			if len(got) == n {
				cancel()
			}
			return nil
		},
	})
	require.NoError(t, c.Run(ctx))
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, n, "events before the deadline")
	return got
}

// fakeTasks is the tasks service's catalogue as the resolver sees it.
type fakeTasks struct {
	mu    sync.Mutex
	tasks map[string][]domain.TaskDefinition // by ref, versions in order
	calls int
}

func newFakeTasks() *fakeTasks {
	required := []domain.Param{{Name: "url", Required: true}, {Name: "method", Required: true, Default: json.RawMessage(`"GET"`)}}
	return &fakeTasks{tasks: map[string][]domain.TaskDefinition{
		"http-request": {
			{Name: "http-request", Version: 1, Status: "active", Type: "template", Params: required},
			{Name: "http-request", Version: 2, Status: "active", Type: "template", Params: required, Results: []string{"status", "body"}},
		},
		"retired":     {{Name: "retired", Version: 1, Status: "inactive", Type: "template"}},
		"infra/build": {{Name: "build", Version: 1, Status: "active", Type: "template", Results: []string{"image"}}},
		"other/build": {{Name: "build", Version: 1, Status: "active", Type: "template"}},
	}}
}

func (f *fakeTasks) ResolveTask(_ context.Context, ref string, version int) (domain.TaskDefinition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	versions := f.tasks[ref]
	if len(versions) == 0 {
		return domain.TaskDefinition{}, apperr.New(apperr.TaskNotFound, "no task %s", ref)
	}
	if version == 0 {
		return versions[len(versions)-1], nil
	}
	if version > len(versions) {
		return domain.TaskDefinition{}, apperr.New(apperr.TaskNotFound, "no task %s version %d", ref, version)
	}
	return versions[version-1], nil
}

type fakeParams struct{}

func (fakeParams) GlobalParams(context.Context) ([]string, error) { return []string{"region"}, nil }
func (fakeParams) TeamParams(_ context.Context, team string) ([]string, error) {
	return []string{team + "-token"}, nil
}

// The service follows team events: duplicates change nothing, and a late deletion of an
// older incarnation does not remove a team created again under the same name.
func TestFollowsTeamEventsIdempotently(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	client, err := mongox.Connect(ctx, testkit.MongoURI(t))
	require.NoError(t, err)
	db := client.Database(testkit.Database(t))
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TeamEvents))
	producer := kafkax.NewProducer(kcfg)
	defer producer.Close()

	svc, err := workflows.New(ctx, workflows.Config{GroupID: kcfg.TopicPrefix + "workflows", SecretKey: testSecretKey}, workflows.Deps{
		DB: db, Kafka: kcfg, Publisher: producer, Tasks: newFakeTasks(), Params: fakeParams{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = client.Disconnect(context.Background())
	})

	publish := func(id, typ string, data any) {
		e, err := events.New(id, events.Source("identity"), typ, "/team/infra", data)
		require.NoError(t, err)
		require.NoError(t, producer.Publish(ctx, events.TeamEvents, "infra", e))
	}
	created := events.TeamCreated{ID: "a1", Name: "infra", DisplayName: "Infra", CreationDate: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	publish("team-created-a1", events.TypeTeamCreated, created)
	publish("team-created-a1", events.TypeTeamCreated, created)
	waitFor(t, db, bson.M{"_id": "infra", "teamId": "a1", "displayName": "Infra"})

	publish("team-deleted-a1", events.TypeTeamDeleted, events.TeamDeleted{ID: "a1", Name: "infra"})
	publish("team-created-b2", events.TypeTeamCreated, events.TeamCreated{ID: "b2", Name: "infra", DisplayName: "Infra 2"})
	publish("team-deleted-a1", events.TypeTeamDeleted, events.TeamDeleted{ID: "a1", Name: "infra"})
	publish("marker", events.TypeTeamCreated, events.TeamCreated{ID: "m", Name: "marker"})
	waitFor(t, db, bson.M{"_id": "marker"})

	var docs []bson.M
	cur, err := db.Collection("teams").Find(ctx, bson.M{"_id": "infra"})
	require.NoError(t, err)
	require.NoError(t, cur.All(ctx, &docs))
	require.Len(t, docs, 1)
	assert.Equal(t, "b2", docs[0]["teamId"])
}

// A team's deletion removes its workflows; the team created again starts empty, with its
// whole quota.
func TestTeamDeletionCascades(t *testing.T) {
	t.Parallel()
	bothStores(t, testTeamDeletionCascades)
}

func testTeamDeletionCascades(t *testing.T, store string) {
	f := newFixture(t, fixtureOptions{quota: app.DefaultQuota(2), store: store})
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("one", 1))
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("two", 1))
	f.must(t, http.StatusTooManyRequests, editor, http.MethodPost, base, chain("three", 1))

	f.publishTeam(t, events.TypeTeamDeleted, events.TeamDeleted{ID: "id-infra", Name: "infra"})
	require.Eventually(t, func() bool {
		return f.call(t, admin, http.MethodGet, base+"/query", nil).code == http.StatusNotFound
	}, 30*time.Second, 10*time.Millisecond)
	for where, n := range f.storedWorkflows(t) {
		assert.Zero(t, n, where)
	}

	f.publishTeam(t, events.TypeTeamCreated, events.TeamCreated{ID: "id-infra-2", Name: "infra", DisplayName: "Infra again"})
	f.waitTeam(t, "infra", "id-infra-2")
	assert.EqualValues(t, 0, f.must(t, http.StatusOK, reader, http.MethodGet, base+"/query", nil).body["totalElements"])
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("one", 1))
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, chain("two", 1))
}

// --- workflow bodies -------------------------------------------------------------------

// chain is a workflow whose n template tasks run one after another between start and end.
func chain(name string, n int) map[string]any {
	tasks := []any{map[string]any{"name": "start", "type": "start"}}
	prev := "start"
	for i := range n {
		task := fmt.Sprintf("step-%d", i+1)
		tasks = append(tasks, map[string]any{
			"name": task, "type": "template", "taskRef": "http-request",
			"dependencies": []any{map[string]any{"taskRef": prev}},
			"params":       []any{map[string]any{"name": "url", "value": "https://example.com/" + task}},
			"annotations":  map[string]any{"baton.io/position": map[string]any{"x": 100 * (i + 1), "y": 50}},
		})
		prev = task
	}
	tasks = append(tasks, map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": prev}}})
	return map[string]any{"name": name, "tasks": tasks}
}

func names(items []any, key string) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, fmt.Sprint(it.(map[string]any)[key]))
	}
	return out
}

// testSecretKey seals password parameters in these tests.
const testSecretKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

func testSealer(tb testing.TB) *secrets.Box {
	tb.Helper()
	box, err := secrets.FromString(testSecretKey)
	require.NoError(tb, err)
	return box
}
