package standalone_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dashboards and alert rules under deploy/, checked against what Baton really serves:
// a real Prometheus (Debian's binary) scrapes a standalone Baton's operators' listener
// every second while it runs a small workload, then every dashboard panel's query runs
// through Prometheus's HTTP API and the alert rules are evaluated by it.
//
// The test needs the prometheus binary. Without it, it is skipped when BATON_PROMETHEUS_TEST
// is unset and fails when it is set, as make sets it (make tools installs the binary).

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../../.."

// quietQuery matches the queries on what a healthy short workload never makes: reconciler
// repairs (a replica dying, a store failing), misfires (no scheduler running) and refused
// fires. Their series appear at their first count, so their queries may answer nothing;
// they must still be valid queries on documented families.
var quietQuery = regexp.MustCompile(`baton_runs_reconciler_repairs_total|outcome="misfire"|outcome="refused"`)

// quietFamilies are the families quietQuery's queries read, which the workload never makes.
var quietFamilies = map[string]bool{"baton_runs_reconciler_repairs_total": true}

// familyRef matches a metric name in a query, always followed by its selector: Baton's,
// Go's, the process's and HTTP's (a label such as http_server_name has no selector).
var familyRef = regexp.MustCompile(`\b((?:baton|go|process|http_server)_[a-z0-9_]+)\{`)

type panelQuery struct {
	dashboard, panel, expr string
}

// dashboardQueries reads every panel's queries from deploy/grafana/dashboards, checking
// each dashboard's variables and data sources on the way.
func dashboardQueries(t *testing.T) []panelQuery {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "deploy/grafana/dashboards/*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the dashboards are found")
	var out []panelQuery
	uids := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var d struct {
			UID        string `json:"uid"`
			Title      string `json:"title"`
			Templating struct {
				List []struct {
					Name  string `json:"name"`
					Type  string `json:"type"`
					Query any    `json:"query"`
				} `json:"list"`
			} `json:"templating"`
			Panels []struct {
				Title      string `json:"title"`
				Datasource struct {
					UID string `json:"uid"`
				} `json:"datasource"`
				Targets []struct {
					Expr       string `json:"expr"`
					Datasource struct {
						UID string `json:"uid"`
					} `json:"datasource"`
				} `json:"targets"`
			} `json:"panels"`
		}
		require.NoError(t, json.Unmarshal(raw, &d), f)
		name := filepath.Base(f)
		require.NotEmpty(t, d.UID, name)
		require.NotContains(t, uids, d.UID, "%s and %s share a uid", name, uids[d.UID])
		uids[d.UID] = name
		vars := map[string]string{}
		for _, v := range d.Templating.List {
			vars[v.Name] = v.Type
		}
		assert.Equal(t, map[string]string{"datasource": "datasource", "job": "query", "instance": "query"}, vars, "%s's variables", name)
		require.NotEmpty(t, d.Panels, name)
		for _, p := range d.Panels {
			assert.Equal(t, "${datasource}", p.Datasource.UID, "%s / %s reads the chosen data source", name, p.Title)
			require.NotEmpty(t, p.Targets, "%s / %s has a query", name, p.Title)
			for _, q := range p.Targets {
				assert.Equal(t, "${datasource}", q.Datasource.UID, "%s / %s", name, p.Title)
				assert.Contains(t, q.Expr, `job=~"$job"`, "%s / %s follows the job variable", name, p.Title)
				assert.Contains(t, q.Expr, `instance=~"$instance"`, "%s / %s follows the instance variable", name, p.Title)
				out = append(out, panelQuery{dashboard: name, panel: p.Title, expr: q.Expr})
			}
		}
	}
	return out
}

// substitute replaces Grafana's variables as Grafana would with every job and instance
// chosen ("All" is ".*") and a range covering the test's samples.
func substitute(expr, job string) string {
	return strings.NewReplacer(
		"$__rate_interval", "1m",
		"$__range", "5m",
		"$job", regexp.QuoteMeta(job),
		"$instance", ".*",
	).Replace(expr)
}

// promAPI is a Prometheus server's HTTP API.
type promAPI struct{ base string }

// get answers the data of a successful API call, failing the test on an error status.
func (p promAPI) get(t *testing.T, path string, query url.Values, data any) {
	t.Helper()
	resp, err := http.Get(p.base + path + "?" + query.Encode())
	require.NoError(t, err)
	defer resp.Body.Close()
	var body struct {
		Status    string          `json:"status"`
		Error     string          `json:"error"`
		ErrorType string          `json:"errorType"`
		Data      json.RawMessage `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, "success", body.Status, "%s %v: %s %s", path, query, body.ErrorType, body.Error)
	require.NoError(t, json.Unmarshal(body.Data, data))
}

// query runs an instant query and answers its result's length.
func (p promAPI) query(t *testing.T, expr string) int {
	t.Helper()
	var data struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	}
	p.get(t, "/api/v1/query", url.Values{"query": {expr}}, &data)
	if data.ResultType == "scalar" {
		return 1
	}
	return len(data.Result)
}

// startPrometheus runs the prometheus binary with a configuration scraping target every
// second as job, with the alert rules loaded, and waits until it is ready.
func startPrometheus(t *testing.T, bin, job, target string) promAPI {
	t.Helper()
	rules, err := filepath.Abs(filepath.Join(repoRoot, "deploy/prometheus/alerts.yml"))
	require.NoError(t, err)
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: %q
    static_configs:
      - targets: [%q]
`, rules, job, target)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o600))
	// A free port: taken from the kernel, then released for Prometheus to bind.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin,
		"--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cancel()
		<-exited
		if t.Failed() {
			t.Logf("prometheus said:\n%s", logs.String())
		}
	})
	p := promAPI{base: "http://" + addr}
	stopped := func() bool {
		select {
		case <-exited:
			return true
		default:
			return false
		}
	}
	require.Eventually(t, func() bool {
		if stopped() {
			return true
		}
		resp, err := http.Get(p.base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "prometheus is ready")
	require.False(t, stopped(), "prometheus stopped: %s", logs.String())
	return p
}

// A real Prometheus scraping a standalone Baton that ran scripts, an approval, a schedule
// firing every second and deliveries to a sink that is up and one that is down answers
// every dashboard panel's query with data (but for repairs, misfires and refused fires,
// which a healthy workload never makes: those must still be valid), reads no family Baton
// does not serve, evaluates every alert rule without error, and fires the give-up alert for
// the events given up on the sink that is down.
func TestIntegrationDashboardsAndAlerts(t *testing.T) {
	t.Parallel()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("BATON_PROMETHEUS_TEST") == "" {
			t.Skip("prometheus is not installed (Debian's prometheus package; make tools installs it): " +
				"the dashboards and alert rules are not checked. Set BATON_PROMETHEUS_TEST to make this a failure.")
		}
		require.NoError(t, err, "BATON_PROMETHEUS_TEST is set: the prometheus binary is needed")
	}
	queries := dashboardQueries(t)

	g := setUpGates(t, start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0",
		"BATON_LOG_LEVEL": "error", "BATON_SERVICE_KEY": gatesServiceKey,
		// The sink that is down is given up on within the test.
		"BATON_SINK_RETRY_MAX": "200ms", "BATON_SINK_GIVE_UP_AFTER": "1s"}))
	require.NotEmpty(t, g.admin, "the start banner names the operators' listener")
	admin, err := url.Parse(g.admin)
	require.NoError(t, err)
	const job = "baton"
	prom := startPrometheus(t, bin, job, admin.Host)

	// The workload: deliveries to two sinks, scripts, an approval, a schedule.
	up, down := newSink(t), newSink(t)
	down.down.Store(true)
	g.putSinks(t, up.srv.URL+"/events", down.srv.URL+"/events")
	g.workflow(t, approvalFlow)
	g.workflow(t, `{"name":"mark","triggers":{"schedule":{"enabled":true}},"tasks":[{"name":"start","type":"start"},
		{"name":"mark","type":"script","params":[{"name":"script","value":"true"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"mark"}]}]}`)
	for range 3 {
		assert.Equal(t, "succeeded", g.run(t, g.submit(t, "mark", g.tokens["cy"], `{}`), ended)["status"])
	}
	approved := g.submit(t, "ship", g.tokens["cy"], `{}`)
	act := g.action(t, approved)
	for _, who := range []string{"ann", "bob"} {
		code, out := g.decide(t, g.tokens[who], `[{"id":"`+act+`","approved":true}]`)
		require.Equal(t, http.StatusNoContent, code, out)
	}
	assert.Equal(t, "succeeded", g.run(t, approved, ended)["status"])
	waiting := g.submit(t, "ship", g.tokens["cy"], `{}`)
	g.run(t, waiting, func(r map[string]any) bool { return r["awaitingApproval"] == true })
	code, out := g.call(t, http.MethodPost, "/api/v2/team/rel/schedule", g.token,
		`{"name":"tick","workflowRef":"mark","cronSchedule":"* * * * * *","timezone":"UTC"}`)
	require.Equal(t, http.StatusCreated, code, out)

	// Prometheus has scraped what each dashboard shows once the schedule has fired, an
	// event has reached the sink that is up and one was given up on the other, each seen
	// in more than one scrape (rates need two samples).
	for _, expr := range []string{
		fmt.Sprintf(`count_over_time(up{job=%q}[1m]) >= 5 and up{job=%q} == 1`, job, job),
		`count_over_time(baton_schedules_fires_total{outcome="run"}[1m]) >= 2`,
		`count_over_time(baton_integrations_sink_deliveries_total{outcome="delivered"}[1m]) >= 2`,
		`count_over_time(baton_integrations_sink_deliveries_total{outcome="given_up"}[1m]) >= 2`,
		`count_over_time(baton_runs_tasks_waiting{gate="approval"}[1m]) >= 2 and baton_runs_tasks_waiting{gate="approval"} == 1`,
	} {
		require.Eventually(t, func() bool { return prom.query(t, expr) > 0 }, 45*time.Second, 100*time.Millisecond,
			"prometheus has scraped %s", expr)
	}
	assert.Positive(t, up.count(), "the sink that is up received events")

	// Every family a panel reads is one Baton serves, or one the workload cannot make.
	var names []string
	prom.get(t, "/api/v1/label/__name__/values", url.Values{"match[]": {fmt.Sprintf(`{job=%q}`, job)}}, &names)
	served := map[string]bool{}
	for _, n := range names {
		served[n] = true
	}
	for _, q := range queries {
		refs := familyRef.FindAllStringSubmatch(q.expr, -1)
		require.NotEmpty(t, refs, "%s / %s reads a family", q.dashboard, q.panel)
		for _, m := range refs {
			fam := m[1]
			assert.True(t, served[fam] || quietFamilies[fam], "%s / %s reads %s, which Baton does not serve", q.dashboard, q.panel, fam)
		}
	}
	// Grafana's job and instance variables list target_info's values.
	assert.Positive(t, prom.query(t, fmt.Sprintf(`count by (job, instance) (target_info{job=%q})`, job)), "target_info names the job and instance")

	for _, q := range queries {
		expr := substitute(q.expr, job)
		n := prom.query(t, expr)
		if quietQuery.MatchString(q.expr) {
			continue
		}
		assert.Positive(t, n, "%s / %s answers no data: %s", q.dashboard, q.panel, expr)
	}

	// The alert rules: all loaded, each evaluated without error.
	rulesFile, err := os.ReadFile(filepath.Join(repoRoot, "deploy/prometheus/alerts.yml"))
	require.NoError(t, err)
	want := strings.Count(string(rulesFile), "- alert: ")
	require.Positive(t, want)
	type rule struct {
		Name      string `json:"name"`
		Health    string `json:"health"`
		LastError string `json:"lastError"`
		State     string `json:"state"`
	}
	var rules []rule
	require.Eventually(t, func() bool {
		var data struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		}
		prom.get(t, "/api/v1/rules", url.Values{"type": {"alert"}}, &data)
		rules = rules[:0]
		for _, g := range data.Groups {
			rules = append(rules, g.Rules...)
		}
		for _, r := range rules {
			if r.Health == "unknown" {
				return false // not evaluated yet
			}
		}
		return len(rules) == want
	}, 30*time.Second, 100*time.Millisecond, "every alert rule is loaded and evaluated")
	for _, r := range rules {
		assert.Equal(t, "ok", r.Health, "%s: %s", r.Name, r.LastError)
	}
	require.Eventually(t, func() bool {
		var data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		}
		prom.get(t, "/api/v1/alerts", nil, &data)
		for _, a := range data.Alerts {
			if a.Labels["alertname"] == "BatonSinkDeliveriesGivenUp" && a.State == "firing" {
				return true
			}
		}
		return false
	}, 30*time.Second, 100*time.Millisecond, "the give-ups on the sink that is down fire their alert")
}
