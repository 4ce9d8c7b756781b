package deploy

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// mounts answers a compose service's bind mounts: the path in the container of each file
// or folder of the repository mounted there.
func mounts(t *testing.T, svc composeService) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range svc.Volumes {
		parts := strings.Split(v, ":")
		require.GreaterOrEqual(t, len(parts), 2, v)
		if strings.HasPrefix(parts[0], "./") {
			out[parts[1]] = filepath.Join(repoRoot, parts[0])
		}
	}
	return out
}

// inContainer answers the repository file mounted at container path p, through the
// mount of p or of a folder holding it.
func inContainer(m map[string]string, p string) (string, bool) {
	for dst, src := range m {
		if p == dst {
			return src, true
		}
		if rel, ok := strings.CutPrefix(p, dst+"/"); ok {
			return filepath.Join(src, rel), true
		}
	}
	return "", false
}

// The observability profile: Prometheus loads the alert rules its configuration names from
// files compose mounts, and Grafana gets its data source, pointing at that Prometheus, and
// every dashboard, through the provisioning folders it reads. Both publish on loopback only.
func TestComposeObservabilityProfile(t *testing.T) {
	c := loadCompose(t)
	prom, ok := c.Services["prometheus"]
	require.True(t, ok, "compose runs Prometheus")
	graf, ok := c.Services["grafana"]
	require.True(t, ok, "compose runs Grafana")
	for name, svc := range map[string]composeService{"prometheus": prom, "grafana": graf} {
		assert.Equal(t, []string{"observability"}, svc.Profiles, "%s is in the observability profile", name)
		for _, p := range svc.Ports {
			assert.True(t, strings.HasPrefix(p, "127.0.0.1:"), "%s publishes %s on loopback only", name, p)
		}
	}

	// Prometheus: every rule file it names is mounted, and is the repository's alerts.
	pm := mounts(t, prom)
	cfgFile, ok := pm["/etc/prometheus/prometheus.yml"]
	require.True(t, ok, "prometheus.yml is mounted")
	raw, err := os.ReadFile(cfgFile)
	require.NoError(t, err)
	var cfg struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	require.NotEmpty(t, cfg.RuleFiles, "prometheus.yml loads the alert rules")
	var rules []string
	for _, rf := range cfg.RuleFiles {
		if !path.IsAbs(rf) {
			rf = path.Join("/etc/prometheus", rf)
		}
		src, ok := inContainer(pm, rf)
		require.True(t, ok, "rule file %s is mounted", rf)
		rules = append(rules, filepath.Clean(src))
	}
	assert.Contains(t, rules, filepath.Join(repoRoot, "deploy", "prometheus", "alerts.yml"))

	// Grafana: provisioning read from /etc/grafana/provisioning.
	gm := mounts(t, graf)
	prov, ok := gm["/etc/grafana/provisioning"]
	require.True(t, ok, "Grafana's provisioning folder is mounted")
	raw, err = os.ReadFile(filepath.Join(prov, "datasources", "prometheus.yml"))
	require.NoError(t, err)
	var ds struct {
		Datasources []struct {
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &ds))
	require.Len(t, ds.Datasources, 1)
	assert.Equal(t, "prometheus", ds.Datasources[0].Type)
	assert.Equal(t, "http://prometheus:9090", ds.Datasources[0].URL, "the data source is compose's Prometheus")

	raw, err = os.ReadFile(filepath.Join(prov, "dashboards", "baton.yml"))
	require.NoError(t, err)
	var dp struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &dp))
	require.Len(t, dp.Providers, 1)
	assert.Equal(t, "file", dp.Providers[0].Type)
	src, ok := inContainer(gm, dp.Providers[0].Options.Path)
	require.True(t, ok, "the dashboards' folder %s is mounted", dp.Providers[0].Options.Path)
	provided, err := filepath.Glob(filepath.Join(src, "*.json"))
	require.NoError(t, err)
	for _, want := range []string{"overview", "engine", "schedules", "integrations", "infrastructure"} {
		assert.Contains(t, provided, filepath.Join(src, want+".json"), "the %s dashboard is provisioned", want)
	}
	if home := graf.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home != "" {
		f, ok := inContainer(gm, home)
		require.True(t, ok, "the home dashboard %s is mounted", home)
		_, err := os.Stat(f)
		assert.NoError(t, err, "the home dashboard exists")
	}
}
