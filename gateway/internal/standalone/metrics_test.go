package standalone_test

import (
	"net/http"
	"regexp"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape reads the operators' listener's /metrics, parsed.
func scrape(t *testing.T, b *baton) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(b.admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return families
}

// seriesValue answers the value of the series of family name whose labels include want (a
// histogram's count), and whether there is one.
func seriesValue(families map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := families[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// idLike matches what an id looks like: a UUID, or a long run of hex.
var idLike = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-|[0-9a-f]{16,}`)

// A standalone Baton's operators' listener serves the workflow families: after a run with a
// script task that succeeded and one waiting on an approval, runs started and ended, run
// and task durations, the runner's claim and the approval waiting are there with those
// values, the outbox empties, and no label of any family holds an id or a Host header.
func TestIntegrationWorkflowMetrics(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	require.NotEmpty(t, g.admin, "the start banner names the operators' listener")
	g.workflow(t, approvalFlow)
	g.workflow(t, `{"name":"mark","tasks":[{"name":"start","type":"start"},
		{"name":"mark","type":"script","params":[{"name":"script","value":"true"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"mark"}]}]}`)

	done := g.submit(t, "mark", g.tokens["cy"], `{}`)
	assert.Equal(t, "succeeded", g.run(t, done, ended)["status"])
	waiting := g.submit(t, "ship", g.tokens["cy"], `{}`)
	g.run(t, waiting, func(r map[string]any) bool { return r["awaitingApproval"] == true })

	var families map[string]*dto.MetricFamily
	// The run is said ended by the API once stored; a scrape reads what was recorded with
	// that write, but give the two a deadline rather than a race.
	require.Eventually(t, func() bool {
		families = scrape(t, g.baton)
		n, _ := seriesValue(families, "baton_runs_ended_total", map[string]string{"status": "succeeded", "trigger": "manual"})
		w, _ := seriesValue(families, "baton_runs_tasks_waiting", map[string]string{"gate": "approval"})
		return n >= 1 && w == 1
	}, 30*time.Second, 20*time.Millisecond, "the succeeded run and the waiting approval are counted")

	tests := []struct {
		family  string
		labels  map[string]string
		atLeast float64
	}{
		{"baton_runs_started_total", map[string]string{"trigger": "manual"}, 2},
		{"baton_runs_ended_total", map[string]string{"trigger": "manual", "status": "succeeded"}, 1},
		{"baton_runs_duration_seconds", map[string]string{"status": "succeeded"}, 1},
		{"baton_runs_task_duration_seconds", map[string]string{"type": "script", "status": "succeeded"}, 1},
		{"baton_runs_task_duration_seconds", map[string]string{"type": "start", "status": "succeeded"}, 2},
		{"baton_runs_tasks_waiting", map[string]string{"gate": "approval"}, 1},
		{"baton_runs_dispatch_claim_latency_seconds", map[string]string{"via": "runner"}, 1},
		{"baton_runs_store_operation_duration_seconds", map[string]string{"op": "create_run", "outcome": "ok"}, 2},
		{"baton_runner_slots", nil, 1},
		{"baton_runner_attempts_started_total", map[string]string{"executor": "process"}, 1},
		{"baton_runner_attempts_ended_total", map[string]string{"executor": "process", "outcome": "succeeded"}, 1},
		{"baton_kafka_published_total", map[string]string{"topic": "run.events"}, 1},
		{"baton_kafka_consumed_total", map[string]string{"topic": "task.dispatch", "group": "baton-runner"}, 1},
		{"baton_kafka_consumer_lag", map[string]string{"topic": "run.events.recorded", "group": "baton-runs-recorded"}, 0},
	}
	for _, tt := range tests {
		got, ok := seriesValue(families, tt.family, tt.labels)
		if assert.True(t, ok, "%s%v is served", tt.family, tt.labels) {
			assert.GreaterOrEqual(t, got, tt.atLeast, "%s%v", tt.family, tt.labels)
		}
	}
	w, _ := seriesValue(families, "baton_runs_tasks_waiting", map[string]string{"gate": "approval"})
	assert.Equal(t, 1.0, w, "one run waits on an approval")
	s, _ := seriesValue(families, "baton_runs_tasks_waiting", map[string]string{"gate": "sleep"})
	assert.Equal(t, 0.0, s, "nothing sleeps")
	assert.Equal(t, dto.MetricType_HISTOGRAM, families["baton_runs_duration_seconds"].GetType())
	_, ok := seriesValue(families, "baton_runs_events_unconfirmed_age_seconds", nil)
	assert.True(t, ok, "the outbox's age is served")
	// Integrations says every status event recorded (there is no sink): the backlog empties.
	require.Eventually(t, func() bool {
		n, ok := seriesValue(scrape(t, g.baton), "baton_runs_events_unconfirmed", nil)
		return ok && n == 0
	}, 30*time.Second, 20*time.Millisecond, "every status event is confirmed recorded")

	// HTTP families label a route by its pattern, and carry no Host header a client sent.
	routes := map[string]bool{}
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.NotEqual(t, "net_host_name", l.GetName(), "%s", name)
				if l.GetName() == "http_route" {
					routes[l.GetValue()] = true
				}
			}
		}
	}
	assert.True(t, routes["/api/v2/team/:team/workflowrun/:id"], "the runs service labels its route pattern: %v", routes)
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				v := l.GetValue()
				assert.False(t, idLike.MatchString(v), "%s{%s=%q} holds an id", name, l.GetName(), v)
				assert.NotContains(t, v, done, "%s{%s}", name, l.GetName())
				assert.NotContains(t, v, waiting, "%s{%s}", name, l.GetName())
			}
		}
	}
}

// A schedule firing every second shows in the schedules' families: fires that made a run,
// and their skew.
func TestIntegrationScheduleMetrics(t *testing.T) {
	t.Parallel()
	s := startSchedules(t)
	require.NotEmpty(t, s.admin, "the start banner names the operators' listener")
	s.create(t, `{"name":"tick","workflowRef":"nightly","cronSchedule":"* * * * * *","timezone":"UTC","labels":{"sched":"tick"}}`)
	require.Eventually(t, func() bool { return len(s.runs(t, "tick")) >= 2 }, 30*time.Second, 50*time.Millisecond)
	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		families = scrape(t, s.baton)
		n, _ := seriesValue(families, "baton_schedules_fires_total", map[string]string{"outcome": "run"})
		return n >= 2
	}, 30*time.Second, 20*time.Millisecond, "the fires that made runs are counted")
	skews, ok := seriesValue(families, "baton_schedules_fire_skew_seconds", nil)
	require.True(t, ok, "the fires' skew is served")
	assert.GreaterOrEqual(t, skews, 2.0)
	started, _ := seriesValue(families, "baton_runs_started_total", map[string]string{"trigger": "schedule"})
	assert.GreaterOrEqual(t, started, 2.0, "the runs it made started by the schedule trigger")
}

// Deliveries to sinks show in the integrations' families: to a sink that is up, delivered,
// with their latency; to one that is down, retried. No label names a sink or its token.
func TestIntegrationDeliveryMetrics(t *testing.T) {
	t.Parallel()
	b := start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0", "BATON_LOG_LEVEL": "error"})
	require.NotEmpty(t, b.admin, "the start banner names the operators' listener")
	up, down := newSink(t), newSink(t)
	down.down.Store(true)
	b.putSinks(t, up.srv.URL+"/events", down.srv.URL+"/in?token=metrics-sink-token")
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"out"}`)
	require.Equal(t, http.StatusCreated, code, out)
	wf := `{"name":"notify","tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/out/workflow", b.token, wf)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	// The sinks reach the service within its settings cache's life: run until one is sent.
	require.Eventually(t, func() bool {
		if up.count() > 0 && down.refused.Load() > 0 {
			return true
		}
		code, run := b.call(t, http.MethodPost, "/api/v2/team/out/workflow/notify/submit?start=true", b.token, `{}`)
		require.Equal(t, http.StatusCreated, code, run)
		return false
	}, 30*time.Second, 500*time.Millisecond)

	var families map[string]*dto.MetricFamily
	require.Eventually(t, func() bool {
		families = scrape(t, b)
		delivered, _ := seriesValue(families, "baton_integrations_sink_deliveries_total", map[string]string{"outcome": "delivered"})
		retried, _ := seriesValue(families, "baton_integrations_sink_deliveries_total", map[string]string{"outcome": "retried"})
		return delivered >= 1 && retried >= 1
	}, 30*time.Second, 20*time.Millisecond, "deliveries and retries are counted")
	latencies, ok := seriesValue(families, "baton_integrations_sink_delivery_latency_seconds", map[string]string{"outcome": "delivered"})
	require.True(t, ok, "the delivery latency is served")
	assert.GreaterOrEqual(t, latencies, 1.0)
	for name, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				assert.NotContains(t, l.GetValue(), "metrics-sink-token", "%s{%s}", name, l.GetName())
				assert.NotContains(t, l.GetValue(), up.srv.URL, "%s{%s}", name, l.GetName())
			}
		}
	}
}
