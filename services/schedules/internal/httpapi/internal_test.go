package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/schedulesapi"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
	"github.com/baton-flow/baton/services/schedules/internal/httpapi"
)

// memStore is the part of app.Store an internal create uses, in memory, ids unique as
// the database's are; the rest is left to the nil app.Store (a call to it fails the test).
type memStore struct {
	app.Store
	mu sync.Mutex
	m  map[string]domain.Schedule
}

func (s *memStore) CreateSchedule(_ context.Context, sch *domain.Schedule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[sch.ID]; ok {
		return domain.ErrConflict
	}
	sch.Version = 1
	s.m[sch.ID] = *sch
	return nil
}

func (s *memStore) FindSchedule(_ context.Context, team, id string) (*domain.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sch, ok := s.m[id]
	if !ok || sch.Team != team {
		return nil, apperr.New(apperr.ScheduleNotFound, "Schedule '%s' was not found.", id)
	}
	return &sch, nil
}

func (s *memStore) all() []domain.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.Schedule, 0, len(s.m))
	for _, sch := range s.m {
		out = append(out, sch)
	}
	return out
}

// workflows knows team ops's workflows: nightly, with a password param, and paused, whose
// schedule trigger is off.
type workflows struct{}

func (workflows) Workflow(_ context.Context, team, name string) (app.WorkflowInfo, error) {
	switch {
	case team == "ops" && name == "nightly":
		return app.WorkflowInfo{ScheduleEnabled: true, Secret: []string{"token"}}, nil
	case team == "ops" && name == "paused":
		return app.WorkflowInfo{}, nil
	}
	return app.WorkflowInfo{}, apperr.New(apperr.WorkflowNotFound, "Workflow '%s' was not found in team '%s'.", name, team)
}

var now = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

// internalAPI serves the internal routes as the service does, behind the principal's
// signature and the services-only check, over a store in memory; it answers the store, the
// signer and the base URL.
func internalAPI(t *testing.T) (*memStore, *auth.Signer, string) {
	t.Helper()
	signer, err := auth.NewSigner([]byte("schedules-internal-test-key-01234"))
	require.NoError(t, err)
	store := &memStore{m: map[string]domain.Schedule{}}
	// Ids come from the keys: the service's own are never asked for.
	schedules := app.NewSchedules(app.Deps{Store: store, Workflows: workflows{}, Now: func() time.Time { return now },
		NewID: func() string { panic("an internal create made a random id") }})
	a := httpx.NewApp(httpx.Config{Name: "schedules-test", NoTracing: true})
	httpapi.InternalRoutes(a.Group(schedulesapi.Prefix, fiberauth.Middleware(signer), fiberauth.ServiceOnly()), schedules)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = a.Listener(ln) }()
	// Forced at once: the clients keep their connections open.
	t.Cleanup(func() { _ = a.ShutdownWithTimeout(0) })
	return store, signer, "http://" + ln.Addr().String()
}

var runs = auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}

func request(key string) schedulesapi.CreateSchedule {
	return schedulesapi.CreateSchedule{Key: key, WorkflowRef: "nightly", Name: "later", Description: "Scheduled by task 'later'.",
		Date: now.Add(time.Hour), Timezone: "Europe/Paris", Params: map[string]any{"who": "ada", "token": "s3cret", "key": "k1"},
		Secret: []string{"key"}, Labels: map[string]string{"from": "release"},
		CreatedBy: schedulesapi.Initiator{Type: "user", ID: "u1", Name: "Ada", Person: "u1"}}
}

// The internal create through the typed client: a runOnce schedule made active on behalf
// of the initiator named, without asking them for permissions; its key's schedule answered
// again, unchanged, however the request changed; a refusal answered as the contract's
// error.
func TestInternalCreateSchedule(t *testing.T) {
	t.Parallel()
	store, signer, url := internalAPI(t)
	c := schedulesapi.New(registry.NewStatic(map[string][]string{schedulesapi.Service: {url}}), signer, runs)
	ctx := context.Background()

	made, err := c.CreateSchedule(ctx, "ops", request("run-1.3"))
	require.NoError(t, err)
	assert.True(t, made.Created)
	assert.Len(t, made.ID, 24)
	assert.Equal(t, now.Add(time.Hour), made.Date)
	assert.False(t, made.TriggerDisabled)
	sch, err := store.FindSchedule(ctx, "ops", made.ID)
	require.NoError(t, err)
	assert.Equal(t, domain.TypeRunOnce, sch.Type)
	assert.Equal(t, domain.StatusActive, sch.Status)
	assert.Equal(t, "nightly", sch.Workflow)
	assert.Equal(t, "later", sch.Name)
	assert.Equal(t, "Europe/Paris", sch.Timezone)
	assert.Equal(t, now.Add(time.Hour), sch.Next, "it fires at its date")
	assert.Equal(t, map[string]any{"who": "ada", "token": "s3cret", "key": "k1"}, sch.Params)
	assert.Equal(t, []string{"token", "key"}, sch.Secret, "the workflow's password params and the secrets named")
	assert.Equal(t, domain.Initiator{Type: "user", ID: "u1", Name: "Ada", Person: "u1"}, sch.CreatedBy)

	again := request("run-1.3")
	again.Date = now.Add(2 * time.Hour)
	got, err := c.CreateSchedule(ctx, "ops", again)
	require.NoError(t, err)
	assert.Equal(t, schedulesapi.CreatedSchedule{ID: made.ID, Date: now.Add(time.Hour)}, got, "the key's schedule, as it was made")
	assert.Len(t, store.all(), 1)

	paused := request("run-2.1")
	paused.WorkflowRef = "paused"
	got, err = c.CreateSchedule(ctx, "ops", paused)
	require.NoError(t, err)
	assert.True(t, got.TriggerDisabled, "made, but it does not fire while the trigger is off")
	assert.NotEqual(t, made.ID, got.ID)

	tests := []struct {
		name   string
		change func(*schedulesapi.CreateSchedule)
		want   apperr.Reason
	}{
		{"no such workflow", func(r *schedulesapi.CreateSchedule) { r.WorkflowRef = "nope" }, apperr.WorkflowNotFound},
		{"in the past", func(r *schedulesapi.CreateSchedule) { r.Date = now.Add(-time.Second) }, apperr.ScheduleInvalidRunOnce},
		{"no date", func(r *schedulesapi.CreateSchedule) { r.Date = time.Time{} }, apperr.ScheduleInvalidRunOnce},
		{"not a zone", func(r *schedulesapi.CreateSchedule) { r.Timezone = "Mars/Olympus" }, apperr.ScheduleInvalidReq},
		{"no key", func(r *schedulesapi.CreateSchedule) { r.Key = "" }, apperr.ScheduleInvalidReq},
		{"a key too long", func(r *schedulesapi.CreateSchedule) { r.Key = strings.Repeat("k", 257) }, apperr.ScheduleInvalidReq},
		{"no workflow", func(r *schedulesapi.CreateSchedule) { r.WorkflowRef = "" }, apperr.ScheduleInvalidReq},
		{"a label key the store cannot keep", func(r *schedulesapi.CreateSchedule) { r.Labels = map[string]string{"$set": "x"} },
			apperr.ScheduleInvalidReq},
	}
	for _, tt := range tests {
		req := request("refused/" + tt.name)
		tt.change(&req)
		_, err := c.CreateSchedule(ctx, "ops", req)
		assert.True(t, apperr.HasReason(err, tt.want), "%s: want %s, got %v", tt.name, tt.want.Name, err)
	}
	_, err = c.CreateSchedule(ctx, "dev", request("run-1.3"))
	assert.True(t, apperr.HasReason(err, apperr.WorkflowNotFound), "the same key in another team is another request: %v", err)
	assert.Len(t, store.all(), 2, "nothing refused was stored")
}

// Requests with one key at once make one schedule: each is answered it, one as its maker.
func TestInternalCreateScheduleAtOnce(t *testing.T) {
	t.Parallel()
	store, signer, url := internalAPI(t)
	c := schedulesapi.New(registry.NewStatic(map[string][]string{schedulesapi.Service: {url}}), signer, runs)
	const n = 16
	answers := make([]schedulesapi.CreatedSchedule, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			answers[i], err = c.CreateSchedule(context.Background(), "ops", request("run-9.1"))
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	created := 0
	for _, a := range answers {
		assert.Equal(t, answers[0].ID, a.ID)
		if a.Created {
			created++
		}
	}
	assert.Equal(t, 1, created)
	assert.Len(t, store.all(), 1)
}

// Only Baton's services reach the internal endpoint: a user's signed principal is refused.
func TestInternalCreateScheduleIsForServices(t *testing.T) {
	t.Parallel()
	store, signer, url := internalAPI(t)
	body := strings.NewReader(`{"key":"k","workflowRef":"nightly","name":"x","date":"2026-11-27T11:00:00Z","timezone":"UTC",
		"createdBy":{"type":"user","id":"u1"}}`)
	req, err := http.NewRequest(http.MethodPost, url+schedulesapi.CreateSchedulePath("ops"), body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	require.NoError(t, signer.SetHeaders(auth.Principal{Type: auth.TypeUser, ID: "u1", Name: "Ada"}, req.Header.Set))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	assert.Empty(t, store.all())
}
