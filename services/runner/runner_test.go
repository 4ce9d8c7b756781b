package runner_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/kafkax"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
	"github.com/baton-flow/baton/services/runner"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestConfigFromEnv(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]string
		want    func(runner.Config) bool
		wantErr string
	}{
		{
			name: "defaults",
			want: func(c runner.Config) bool {
				return c.GroupID == "baton-runner" && c.Concurrency == 8 && c.Heartbeat == 5*time.Second &&
					c.MaxLog == 10<<20 && c.DockerSocket == "/var/run/docker.sock" &&
					strings.HasSuffix(c.WorkDir, "baton-runner") && c.ID != ""
			},
		},
		{
			name: "set",
			give: map[string]string{
				"BATON_RUNNER_ID": "r1", "BATON_RUNNER_CONCURRENCY": "3", "BATON_RUNNER_HEARTBEAT": "1500ms",
				"BATON_RUNNER_WORKDIR": "/var/lib/runner", "BATON_RUNNER_MAX_LOG": "2MiB", "BATON_RUNNER_DOCKER_SOCKET": "off",
			},
			want: func(c runner.Config) bool {
				return c.ID == "r1" && c.Concurrency == 3 && c.Heartbeat == 1500*time.Millisecond &&
					c.WorkDir == "/var/lib/runner" && c.MaxLog == 2<<20 && c.DockerSocket == ""
			},
		},
		{name: "max log in bytes", give: map[string]string{"BATON_RUNNER_MAX_LOG": "4096"}, want: func(c runner.Config) bool { return c.MaxLog == 4096 }},
		{name: "max log in KiB", give: map[string]string{"BATON_RUNNER_MAX_LOG": "64 KiB"}, want: func(c runner.Config) bool { return c.MaxLog == 64<<10 }},
		{name: "concurrency not a number", give: map[string]string{"BATON_RUNNER_CONCURRENCY": "many"}, wantErr: "BATON_RUNNER_CONCURRENCY"},
		{name: "concurrency zero", give: map[string]string{"BATON_RUNNER_CONCURRENCY": "0"}, wantErr: "BATON_RUNNER_CONCURRENCY"},
		{name: "heartbeat without unit", give: map[string]string{"BATON_RUNNER_HEARTBEAT": "5"}, wantErr: "BATON_RUNNER_HEARTBEAT"},
		{name: "heartbeat negative", give: map[string]string{"BATON_RUNNER_HEARTBEAT": "-1s"}, wantErr: "BATON_RUNNER_HEARTBEAT"},
		{name: "max log unknown unit", give: map[string]string{"BATON_RUNNER_MAX_LOG": "10MB"}, wantErr: "BATON_RUNNER_MAX_LOG"},
		{name: "secret key", give: map[string]string{"BATON_SECRET_KEY": strings.Repeat("ab", 32)},
			want: func(c runner.Config) bool { return c.SecretKey == strings.Repeat("ab", 32) }},
		{name: "secret key too short", give: map[string]string{"BATON_SECRET_KEY": "abcd"}, wantErr: "BATON_SECRET_KEY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := runner.ConfigFromEnv(env(tt.give))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.True(t, tt.want(got), "%+v", got)
		})
	}
}

func TestInstanceIDsDiffer(t *testing.T) {
	t.Parallel()
	a, err := runner.ConfigFromEnv(env(nil))
	require.NoError(t, err)
	b, err := runner.ConfigFromEnv(env(nil))
	require.NoError(t, err)
	assert.NotEqual(t, a.ID, b.ID)
}

func newSigner(t *testing.T) *auth.Signer {
	t.Helper()
	s, err := auth.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	return s
}

type nopPublisher struct{}

func (nopPublisher) Publish(context.Context, string, string, event.Event) error { return nil }

func TestNewNeedsItsDeps(t *testing.T) {
	t.Parallel()
	full := runner.Deps{Publisher: nopPublisher{}, Resolver: registry.NewStatic(nil), Signer: newSigner(t)}
	tests := []struct {
		name string
		drop func(*runner.Deps)
	}{
		{name: "Publisher", drop: func(d *runner.Deps) { d.Publisher = nil }},
		{name: "Resolver", drop: func(d *runner.Deps) { d.Resolver = nil }},
		{name: "Signer", drop: func(d *runner.Deps) { d.Signer = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			deps := full
			tt.drop(&deps)
			_, err := runner.New(t.Context(), runner.Config{}, deps)
			assert.ErrorContains(t, err, tt.name)
		})
	}
	_, err := runner.New(t.Context(), runner.Config{}, full)
	assert.NoError(t, err)
}

// runsService is a fake runs service: it lets this runner claim every attempt but those
// in taken, and never cancels.
func runsService(t *testing.T, signer *auth.Signer, taken string) (registry.Resolver, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var claims []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature)); err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/internal/v1/taskruns/"), "/")
		w.Header().Set("Content-Type", "application/json")
		switch {
		case len(parts) != 2:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"ROUTE_NOT_FOUND"}`))
		case parts[1] == "claim" && parts[0] == taken:
			w.WriteHeader(http.StatusConflict)
		case parts[1] == "claim":
			mu.Lock()
			claims = append(claims, parts[0])
			mu.Unlock()
			_, _ = w.Write([]byte(`{"claimed":true}`))
		default:
			_, _ = w.Write([]byte(`{"cancel":false}`))
		}
	}))
	t.Cleanup(srv.Close)
	return registry.NewStatic(map[string][]string{"runs": {srv.URL}}), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), claims...)
	}
}

// TestIntegrationDispatchToUpdates runs the runner against Kafka: dispatches in, claims
// over HTTP, log chunks and the end out, in order.
func TestIntegrationDispatchToUpdates(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	kcfg := kafkax.Config{Brokers: testkit.KafkaBrokers(t), TopicPrefix: testkit.TopicPrefix(t)}
	require.NoError(t, kafkax.EnsureTopics(ctx, kcfg, 1, events.TaskDispatch, events.TaskUpdates))
	producer := kafkax.NewProducer(kcfg)
	signer := newSigner(t)
	resolver, claims := runsService(t, signer, "tr-taken")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := runner.New(ctx, runner.Config{GroupID: kcfg.TopicPrefix + "runner", ID: "runner-1", WorkDir: t.TempDir()},
		runner.Deps{Kafka: kcfg, Publisher: producer, Resolver: resolver, Signer: signer, Logger: logger})
	require.NoError(t, err)

	updates := make(chan events.TaskUpdate, 64)
	watcher := kafkax.NewConsumer(kcfg, kafkax.ConsumerOptions{
		GroupID: kcfg.TopicPrefix + "watcher", Topic: events.TaskUpdates, Logger: logger,
		Handler: func(_ context.Context, e event.Event) error {
			u, err := events.Decode[events.TaskUpdate](e)
			if err == nil {
				updates <- u
			}
			return err
		},
	})
	var wg sync.WaitGroup
	wg.Go(func() { _ = svc.Run(ctx) })
	wg.Go(func() { _ = watcher.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		_ = producer.Close()
	})

	publish := func(d events.TaskAttempt) {
		e, err := events.New(d.TaskRunID+"/1", events.Source("runs"), events.TypeTaskDispatch, "", d)
		require.NoError(t, err)
		require.NoError(t, producer.Publish(ctx, events.TaskDispatch, d.RunID, e))
	}
	publish(events.TaskAttempt{TaskRunID: "tr-taken", RunID: "run1", Attempt: 1, Type: "script", Spec: events.TaskSpec{Script: "echo never"}})
	publish(events.TaskAttempt{TaskRunID: "tr-generic", RunID: "run1", Attempt: 1, Type: "generic", Queue: "q"})
	publish(events.TaskAttempt{
		TaskRunID: "tr1", RunID: "run1", Attempt: 1, Type: "script", Results: []string{"r"}, Secrets: []string{"t0ken"},
		Spec: events.TaskSpec{Script: "echo using t0ken\necho -n ok > $(results.r.path)\nexit 4"},
	})

	var got []events.TaskUpdate
	timeout := time.After(60 * time.Second)
	for len(got) == 0 || got[len(got)-1].Kind != events.UpdateEnded {
		select {
		case u := <-updates:
			got = append(got, u)
		case <-timeout:
			t.Fatalf("no ended update; got %+v", got)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, events.TaskUpdate{TaskRunID: "tr1", RunID: "run1", Attempt: 1, Kind: events.UpdateLog, Runner: "runner-1", Seq: 0, Log: "using ********\n", Time: got[0].Time}, got[0])
	end := got[1]
	assert.Equal(t, "tr1", end.TaskRunID)
	assert.Equal(t, "failed", end.Status)
	assert.Equal(t, "exit code 4", end.Message)
	require.NotNil(t, end.ExitCode)
	assert.Equal(t, 4, *end.ExitCode)
	assert.Equal(t, map[string]string{"r": "ok"}, end.Results)
	assert.Equal(t, []string{"tr1"}, claims(), "the taken attempt's claim was refused and the generic one not claimed")
}
