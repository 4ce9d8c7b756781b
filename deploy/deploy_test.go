package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// Paths, relative to this package's directory (where `go test` runs).
const (
	repoRoot       = ".."
	composeFile    = "../docker-compose.yml"
	dockerfilePath = "Dockerfile"
	otelConfig     = "otel-collector.yaml"
	promConfig     = "prometheus.yml"
	k8sDir         = "kubernetes"
)

// batonServices are Baton's processes: each one is built from deploy/Dockerfile with
// SERVICE set to its name and deployed as its own container or Deployment.
var batonServices = []string{
	"gateway", "identity", "workflows", "tasks", "runs", "runner", "schedules", "integrations",
}

// infraServices are what the compose file runs for Baton to stand on.
var infraServices = []string{"mongo", "kafka", "consul", "otel-collector", "jaeger"}

// sharedEnv is what every Baton process needs.
var sharedEnv = []string{
	"BATON_MONGO_URI",
	"BATON_KAFKA_BROKERS",
	"BATON_KAFKA_TOPIC_PREFIX",
	"BATON_CONSUL_ADDR",
	"BATON_OTLP_ENDPOINT",
	"BATON_SERVICE_KEY",
	"BATON_LOG_LEVEL",
	"BATON_HTTP_ADDR",
}

// gatewayEnv is what the gateway needs on top of sharedEnv.
var gatewayEnv = []string{
	"BATON_GATEWAY_ADDR",
	"BATON_BOOTSTRAP_TOKEN",
	"BATON_RATE_LIMIT",
	"BATON_RATE_BURST",
}

// secretEnv must never have a literal value in the Kubernetes manifests.
var secretEnv = []string{"BATON_SERVICE_KEY", "BATON_BOOTSTRAP_TOKEN", "BATON_SECRET_KEY", "BATON_ACTIVATION_CODE"}

func requiredEnv(service string) []string {
	switch service {
	case "gateway":
		return append(slices.Clone(sharedEnv), gatewayEnv...)
	case "identity", "workflows", "tasks", "runs", "runner", "schedules", "integrations":
		// The services that seal or open secrets, all with the one key.
		return append(slices.Clone(sharedEnv), "BATON_SECRET_KEY")
	}
	return sharedEnv
}

// topicPartitions are Baton's Kafka topics (without the prefix) and their partition counts:
// the keyed, busy topics get 6, the others and every dead-letter twin 3.
var topicPartitions = map[string]int{
	"team.events":         3,
	"workflow.events":     3,
	"run.requests":        6,
	"run.events":          6,
	"task.dispatch":       6,
	"task.updates":        6,
	"run.events.recorded": 6,
}

// ---------------------------------------------------------------- compose

type composeFileT struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image         string                       `yaml:"image"`
	Build         *composeBuild                `yaml:"build"`
	Entrypoint    []string                     `yaml:"entrypoint"`
	Command       []string                     `yaml:"command"`
	Environment   map[string]string            `yaml:"environment"`
	DependsOn     map[string]composeDependency `yaml:"depends_on"`
	Healthcheck   *composeHealthcheck          `yaml:"healthcheck"`
	Ports         []string                     `yaml:"ports"`
	Volumes       []string                     `yaml:"volumes"`
	Restart       string                       `yaml:"restart"`
	ContainerName string                       `yaml:"container_name"`
	Profiles      []string                     `yaml:"profiles"`
}

type composeBuild struct {
	Context    string            `yaml:"context"`
	Dockerfile string            `yaml:"dockerfile"`
	Args       map[string]string `yaml:"args"`
}

type composeDependency struct {
	Condition string `yaml:"condition"`
}

type composeHealthcheck struct {
	Test    []string `yaml:"test"`
	Disable bool     `yaml:"disable"`
}

// loadCompose parses the compose file; yaml.v3 resolves the `<<` merge keys, so each
// service carries what it merged from x-baton-service and x-baton-env.
func loadCompose(t *testing.T) composeFileT {
	t.Helper()
	raw, err := os.ReadFile(composeFile)
	require.NoError(t, err)
	var c composeFileT
	require.NoError(t, yaml.Unmarshal(raw, &c), "parse %s", composeFile)
	require.NotEmpty(t, c.Services, "no services in %s", composeFile)
	return c
}

// hostPort is the host side of a published port ("8080:8080", "127.0.0.1:9090:9090"),
// or "" when the port is not published on the host.
func hostPort(spec string) string {
	spec, _, _ = strings.Cut(spec, "/")
	parts := strings.Split(spec, ":")
	if len(parts) < 2 {
		return ""
	}
	return parts[len(parts)-2]
}

func TestComposeInfrastructure(t *testing.T) {
	c := loadCompose(t)

	// Whether the service must be health-checked: Baton waits for it to be healthy. The
	// collector and Jaeger images have no shell or probe tool.
	healthchecked := map[string]bool{
		"mongo": true, "kafka": true, "consul": true, "otel-collector": false, "jaeger": false,
	}
	for _, name := range infraServices {
		t.Run(name, func(t *testing.T) {
			svc, ok := c.Services[name]
			require.True(t, ok, "infrastructure service %q missing", name)
			assert.NotEmpty(t, svc.Image, "uses an official image")
			assert.Nil(t, svc.Build, "is not built here")
			assert.Empty(t, svc.ContainerName, "a fixed container_name prevents scaling and parallel stacks")
			if healthchecked[name] {
				require.NotNil(t, svc.Healthcheck, "needs a healthcheck")
				assert.NotEmpty(t, svc.Healthcheck.Test)
				assert.False(t, svc.Healthcheck.Disable)
			}
		})
	}

	mongo := c.Services["mongo"]
	assert.Equal(t, []string{"--replSet", "rs0", "--bind_ip_all"}, mongo.Command)
	assert.Contains(t, strings.Join(mongo.Healthcheck.Test, " "), "rs.initiate(",
		"the healthcheck initiates the replica set")
	assert.Contains(t, strings.Join(mongo.Healthcheck.Test, " "), "host:'mongo:27017'",
		"the member's host must be what clients resolve")
	assert.Contains(t, mongo.Volumes, "mongo-data:/data/db")

	kafka := c.Services["kafka"]
	assert.Equal(t, "broker,controller", kafka.Environment["KAFKA_PROCESS_ROLES"], "KRaft combined mode")
	assert.NotEmpty(t, kafka.Environment["CLUSTER_ID"], "the apache/kafka image requires CLUSTER_ID in KRaft mode")
	assert.Equal(t, "PLAINTEXT://kafka:9092", kafka.Environment["KAFKA_ADVERTISED_LISTENERS"])
	assert.Contains(t, strings.Join(kafka.Healthcheck.Test, " "), "/opt/kafka/bin/kafka-broker-api-versions.sh")
	for _, v := range kafka.Volumes {
		if strings.HasPrefix(v, "kafka-data:") {
			assert.Equal(t, "kafka-data:"+kafka.Environment["KAFKA_LOG_DIRS"], v, "the volume holds the log dirs")
		}
	}

	consul := c.Services["consul"]
	assert.Equal(t, []string{"agent", "-dev", "-client", "0.0.0.0"}, consul.Command)

	for _, vol := range []string{"mongo-data", "kafka-data"} {
		assert.Contains(t, c.Volumes, vol, "named volume %q declared", vol)
	}
}

func TestComposeKafkaTopics(t *testing.T) {
	c := loadCompose(t)
	initSvc, ok := c.Services["kafka-init"]
	require.True(t, ok, "kafka-init creates the topics")
	assert.Equal(t, "service_healthy", initSvc.DependsOn["kafka"].Condition)
	assert.Contains(t, strings.Join(initSvc.Command, " "), "kafka-topics.sh")
	assert.Contains(t, strings.Join(initSvc.Command, " "), "--create --if-not-exists")

	// The prefix it creates with is the one the services publish with.
	assert.Equal(t, c.Services["gateway"].Environment["BATON_KAFKA_TOPIC_PREFIX"], initSvc.Environment["TOPIC_PREFIX"])

	got := map[string]int{}
	for _, spec := range strings.Fields(initSvc.Environment["TOPICS"]) {
		name, parts, ok := strings.Cut(spec, ":")
		require.True(t, ok, "topic spec %q is name:partitions", spec)
		n, err := strconv.Atoi(parts)
		require.NoError(t, err, "topic spec %q", spec)
		_, dup := got[name]
		require.False(t, dup, "topic %q listed twice", name)
		got[name] = n
	}
	want := map[string]int{}
	for topic, partitions := range topicPartitions {
		want[topic] = partitions
		want[topic+".dlq"] = 3
	}
	assert.Equal(t, want, got)
}

func TestComposeBatonServices(t *testing.T) {
	c := loadCompose(t)
	for _, name := range batonServices {
		t.Run(name, func(t *testing.T) {
			svc, ok := c.Services[name]
			require.True(t, ok, "Baton process %q missing", name)

			require.NotNil(t, svc.Build, "built from the repository")
			assert.Equal(t, ".", svc.Build.Context)
			assert.Equal(t, "deploy/Dockerfile", svc.Build.Dockerfile)
			assert.Equal(t, name, svc.Build.Args["SERVICE"])
			assert.Empty(t, svc.Image, "the image comes from the build")

			require.NotNil(t, svc.Healthcheck, "needs a healthcheck")
			assert.Equal(t, []string{"CMD", "/usr/local/bin/baton", "healthcheck"}, svc.Healthcheck.Test)
			assert.Equal(t, "unless-stopped", svc.Restart)
			assert.Empty(t, svc.ContainerName, "a fixed container_name prevents scaling")

			for infra, condition := range map[string]string{
				"mongo":      "service_healthy",
				"kafka":      "service_healthy",
				"consul":     "service_healthy",
				"kafka-init": "service_completed_successfully",
			} {
				dep, ok := svc.DependsOn[infra]
				if assert.True(t, ok, "depends on %s", infra) {
					assert.Equal(t, condition, dep.Condition, "waits for %s", infra)
				}
			}
			assert.Contains(t, svc.DependsOn, "otel-collector", "starts after the collector")

			for _, key := range requiredEnv(name) {
				assert.NotEmpty(t, strings.TrimSpace(svc.Environment[key]), "environment %s", key)
			}
			// Each replica advertises its own container address; a fixed service name
			// would make scaled replicas collide in Consul.
			assert.NotContains(t, svc.Environment, "BATON_ADVERTISE_ADDR")
			assert.Equal(t, "mongodb://mongo:27017/?replicaSet=rs0", svc.Environment["BATON_MONGO_URI"])
			assert.Equal(t, "kafka:9092", svc.Environment["BATON_KAFKA_BROKERS"])
			assert.Equal(t, "consul:8500", svc.Environment["BATON_CONSUL_ADDR"])
			assert.Equal(t, "http://otel-collector:4318", svc.Environment["BATON_OTLP_ENDPOINT"])
			assert.Equal(t, "${BATON_SERVICE_KEY_PREVIOUS:-}", svc.Environment["BATON_SERVICE_KEY_PREVIOUS"],
				"the previous service keys come from the operator's environment")
			assert.Equal(t, "0.0.0.0:8080", svc.Environment["BATON_HTTP_ADDR"])
			assert.Equal(t, "0.0.0.0:8081", svc.Environment["BATON_ADMIN_ADDR"], "metrics apart from the API port")

			if name == "gateway" {
				assert.Equal(t, []string{"8080:8080"}, svc.Ports)
				assert.Equal(t, "${BATON_BOOTSTRAP_TOKEN:?set BATON_BOOTSTRAP_TOKEN}",
					svc.Environment["BATON_BOOTSTRAP_TOKEN"], "no default admin secret in distributed mode")
			} else {
				assert.Empty(t, svc.Ports, "only the gateway is published")
				assert.NotContains(t, svc.Environment, "BATON_BOOTSTRAP_TOKEN")
			}
		})
	}
}

func TestComposeHostPorts(t *testing.T) {
	c := loadCompose(t)
	allowed := map[string][]string{"gateway": {"8080"}, "consul": {"8500"}, "jaeger": {"16686"}}
	for name, svc := range c.Services {
		if len(svc.Profiles) > 0 {
			continue // opt-in extras
		}
		var published []string
		for _, p := range svc.Ports {
			if hp := hostPort(p); hp != "" {
				published = append(published, hp)
			}
		}
		assert.ElementsMatch(t, allowed[name], published, "host ports of %s", name)
	}
}

func TestComposeReferencedFilesExist(t *testing.T) {
	c := loadCompose(t)
	for name, svc := range c.Services {
		if svc.Build != nil {
			_, err := os.Stat(filepath.Join(repoRoot, svc.Build.Context, svc.Build.Dockerfile))
			assert.NoError(t, err, "Dockerfile of %s", name)
		}
		for _, v := range svc.Volumes {
			src, _, _ := strings.Cut(v, ":")
			if strings.HasPrefix(src, "./") {
				_, err := os.Stat(filepath.Join(repoRoot, src))
				assert.NoError(t, err, "file mounted into %s", name)
			}
		}
	}
}

// ---------------------------------------------------------------- Dockerfile

func TestDockerfile(t *testing.T) {
	raw, err := os.ReadFile(dockerfilePath)
	require.NoError(t, err)
	text := string(raw)
	for _, want := range []string{
		"ARG SERVICE",
		"FROM golang:1.26-bookworm AS build",
		"--mount=type=cache,target=/go/pkg/mod",
		"--mount=type=cache,target=/root/.cache/go-build",
		"./gateway/cmd/gateway",
		"./services/${SERVICE}/cmd/${SERVICE}",
		"CGO_ENABLED=0 go build -trimpath",
		"FROM debian:bookworm-slim",
		"ca-certificates",
		"--uid 10001",
		"COPY --from=build /out/baton /usr/local/bin/baton",
		"USER baton",
		"EXPOSE 8080",
		`ENTRYPOINT ["/usr/local/bin/baton"]`,
	} {
		assert.Contains(t, text, want)
	}

	raw, err = os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	require.NoError(t, err)
	var ignored []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			ignored = append(ignored, line)
		}
	}
	for _, want := range []string{".git", ".tools", ".baton", "bin"} {
		assert.Contains(t, ignored, want, ".dockerignore")
	}
	for _, keep := range []string{"go.work", "deploy", "libs", "services", "gateway"} {
		assert.NotContains(t, ignored, keep, "the build needs the whole workspace")
	}
}

// ---------------------------------------------------------------- collector and Prometheus

type otelPipeline struct {
	Receivers  []string `yaml:"receivers"`
	Processors []string `yaml:"processors"`
	Exporters  []string `yaml:"exporters"`
}

type otelConfigT struct {
	Extensions map[string]map[string]any `yaml:"extensions"`
	Receivers  map[string]struct {
		Protocols map[string]struct {
			Endpoint string `yaml:"endpoint"`
		} `yaml:"protocols"`
	} `yaml:"receivers"`
	Processors map[string]any `yaml:"processors"`
	Exporters  map[string]struct {
		Endpoint string `yaml:"endpoint"`
	} `yaml:"exporters"`
	Service struct {
		Extensions []string                `yaml:"extensions"`
		Pipelines  map[string]otelPipeline `yaml:"pipelines"`
	} `yaml:"service"`
}

func TestOtelCollectorConfig(t *testing.T) {
	raw, err := os.ReadFile(otelConfig)
	require.NoError(t, err)
	var cfg otelConfigT
	require.NoError(t, yaml.Unmarshal(raw, &cfg))

	// What the services send to (BATON_OTLP_ENDPOINT, HTTP) is received from other containers.
	otlp, ok := cfg.Receivers["otlp"]
	require.True(t, ok, "an otlp receiver")
	assert.Equal(t, "0.0.0.0:4317", otlp.Protocols["grpc"].Endpoint)
	assert.Equal(t, "0.0.0.0:4318", otlp.Protocols["http"].Endpoint)

	// Every component a pipeline names is defined, as the collector checks at start.
	for _, ext := range cfg.Service.Extensions {
		assert.Contains(t, cfg.Extensions, ext, "extension %s", ext)
	}
	for name, p := range cfg.Service.Pipelines {
		assert.NotEmpty(t, p.Receivers, "pipeline %s", name)
		assert.NotEmpty(t, p.Exporters, "pipeline %s", name)
		for _, r := range p.Receivers {
			assert.Contains(t, cfg.Receivers, r, "pipeline %s receiver", name)
		}
		for _, pr := range p.Processors {
			assert.Contains(t, cfg.Processors, pr, "pipeline %s processor", name)
		}
		for _, e := range p.Exporters {
			assert.Contains(t, cfg.Exporters, e, "pipeline %s exporter", name)
		}
	}

	traces, ok := cfg.Service.Pipelines["traces"]
	require.True(t, ok, "a traces pipeline")
	toJaeger := false
	for _, e := range traces.Exporters {
		if strings.HasPrefix(e, "otlp") && cfg.Exporters[e].Endpoint == "jaeger:4317" {
			toJaeger = true
		}
	}
	assert.True(t, toJaeger, "traces are exported to Jaeger over OTLP gRPC")
	assert.Contains(t, cfg.Service.Pipelines, "metrics")
}

func TestPrometheusConfig(t *testing.T) {
	raw, err := os.ReadFile(promConfig)
	require.NoError(t, err)
	var cfg struct {
		ScrapeConfigs []struct {
			JobName      string `yaml:"job_name"`
			MetricsPath  string `yaml:"metrics_path"`
			DNSSDConfigs []struct {
				Names []string `yaml:"names"`
				Type  string   `yaml:"type"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cfg))

	scraped := map[string]bool{}
	for _, sc := range cfg.ScrapeConfigs {
		if sc.MetricsPath != "" && sc.MetricsPath != "/metrics" {
			continue
		}
		for _, d := range sc.DNSSDConfigs {
			if d.Port == 8081 {
				for _, n := range d.Names {
					scraped[n] = true
				}
			}
		}
		for _, s := range sc.StaticConfigs {
			for _, target := range s.Targets {
				if host, ok := strings.CutSuffix(target, ":8081"); ok {
					scraped[host] = true
				}
			}
		}
	}
	for _, name := range batonServices {
		assert.True(t, scraped[name], "/metrics of %s on its operators' port 8081 is scraped", name)
	}
}

// ---------------------------------------------------------------- Kubernetes

type k8sMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace"`
	Labels    map[string]string `yaml:"labels"`
}

type k8sHeader struct {
	APIVersion string  `yaml:"apiVersion"`
	Kind       string  `yaml:"kind"`
	Metadata   k8sMeta `yaml:"metadata"`
}

type k8sDeployment struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata k8sMeta `yaml:"metadata"`
			Spec     struct {
				Containers []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	Env     []k8sEnvVar `yaml:"env"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
	} `yaml:"envFrom"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
}

type k8sEnvVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value"`
	ValueFrom *struct {
		SecretKeyRef *struct {
			Name     string `yaml:"name"`
			Key      string `yaml:"key"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretKeyRef"`
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
	} `yaml:"valueFrom"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"` // a port name or number; both decode as text
	} `yaml:"httpGet"`
}

type k8sService struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Port       int    `yaml:"port"`
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type k8sConfigMap struct {
	Metadata k8sMeta           `yaml:"metadata"`
	Data     map[string]string `yaml:"data"`
}

// k8sObjects is every document of every manifest, by kind and then by name.
type k8sObjects map[string]map[string]*yaml.Node

// loadKubernetes renders deploy/kubernetes (Baton and its infrastructure) as
// `kubectl apply -k` would.
func loadKubernetes(t *testing.T) k8sObjects {
	t.Helper()
	objs := k8sObjects{}
	for _, o := range render(t, k8sDir) {
		var node yaml.Node
		require.NoError(t, yaml.Unmarshal(o.YAML, &node), "%s", o)
		var h k8sHeader
		require.NoError(t, node.Decode(&h), "%s", o)
		require.NotEmpty(t, h.APIVersion, "%s: apiVersion", o)
		if h.Kind != "Namespace" {
			assert.Equal(t, "baton", h.Metadata.Namespace, "%s namespace", o)
		}
		if objs[h.Kind] == nil {
			objs[h.Kind] = map[string]*yaml.Node{}
		}
		_, dup := objs[h.Kind][h.Metadata.Name]
		require.False(t, dup, "%s defined twice", o)
		objs[h.Kind][h.Metadata.Name] = &node
	}
	return objs
}

func isSubset(sub, super map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if super[k] != v {
			return false
		}
	}
	return true
}

func TestKubernetesManifests(t *testing.T) {
	objs := loadKubernetes(t)
	require.Contains(t, objs["Namespace"], "baton")

	configMaps := map[string]map[string]string{}
	for name, node := range objs["ConfigMap"] {
		var cm k8sConfigMap
		require.NoError(t, node.Decode(&cm))
		configMaps[name] = cm.Data
	}

	for _, name := range batonServices {
		t.Run(name, func(t *testing.T) {
			// The runner is a StatefulSet (its work directory is a volume of its own).
			depNode, ok := objs["Deployment"][name]
			if !ok {
				depNode, ok = objs["StatefulSet"][name]
			}
			require.True(t, ok, "Deployment or StatefulSet %s", name)
			var dep k8sDeployment
			require.NoError(t, depNode.Decode(&dep))

			podLabels := dep.Spec.Template.Metadata.Labels
			assert.True(t, isSubset(dep.Spec.Selector.MatchLabels, podLabels), "selector matches the pod labels")
			if _, scaled := objs["HorizontalPodAutoscaler"][name]; !scaled {
				assert.GreaterOrEqual(t, dep.Spec.Replicas, 1)
			}
			require.Len(t, dep.Spec.Template.Spec.Containers, 1)
			ctr := dep.Spec.Template.Spec.Containers[0]
			assert.Regexp(t, `^ghcr\.io/baton-flow/baton-`+name+`:\d+\.\d+\.\d+$`, ctr.Image)

			ports := map[string]int{}
			for _, p := range ctr.Ports {
				ports[p.Name] = p.ContainerPort
				ports[strconv.Itoa(p.ContainerPort)] = p.ContainerPort
			}
			assert.Contains(t, ports, "8080", "serves on 8080")
			assert.Equal(t, 8081, ports["admin"], "serves /metrics for operators on 8081")

			for probe, want := range map[string]*k8sProbe{"/ready": ctr.ReadinessProbe, "/health": ctr.LivenessProbe} {
				if assert.NotNil(t, want, "probe %s", probe) && assert.NotNil(t, want.HTTPGet, "probe %s", probe) {
					assert.Equal(t, probe, want.HTTPGet.Path)
					assert.Equal(t, 8080, ports[want.HTTPGet.Port], "probe %s port", probe)
				}
			}
			assert.NotEmpty(t, ctr.Resources.Requests["cpu"], "cpu request")
			assert.NotEmpty(t, ctr.Resources.Requests["memory"], "memory request")

			// The environment the container gets: its ConfigMaps, then its own env.
			env := map[string]k8sEnvVar{}
			for _, from := range ctr.EnvFrom {
				if from.ConfigMapRef == nil {
					continue
				}
				data, ok := configMaps[from.ConfigMapRef.Name]
				require.True(t, ok, "ConfigMap %s exists", from.ConfigMapRef.Name)
				for k, v := range data {
					env[k] = k8sEnvVar{Name: k, Value: v}
				}
			}
			for _, e := range ctr.Env {
				env[e.Name] = e
			}
			if e, ok := env["BATON_ADMIN_ADDR"]; assert.True(t, ok, "environment BATON_ADMIN_ADDR") {
				assert.Equal(t, "0.0.0.0:8081", e.Value)
			}
			// The previous service keys, kept only during a rotation, come from the Secret
			// when it has them.
			if e, ok := env["BATON_SERVICE_KEY_PREVIOUS"]; assert.True(t, ok, "environment BATON_SERVICE_KEY_PREVIOUS") &&
				assert.NotNil(t, e.ValueFrom) && assert.NotNil(t, e.ValueFrom.SecretKeyRef) {
				assert.Equal(t, "baton-secrets", e.ValueFrom.SecretKeyRef.Name)
				assert.Equal(t, "BATON_SERVICE_KEY_PREVIOUS", e.ValueFrom.SecretKeyRef.Key)
				assert.True(t, e.ValueFrom.SecretKeyRef.Optional, "a Secret without previous keys still starts the pod")
			}
			for _, key := range append(requiredEnv(name), "BATON_ADVERTISE_ADDR") {
				e, ok := env[key]
				if !assert.True(t, ok, "environment %s", key) {
					continue
				}
				if slices.Contains(secretEnv, key) {
					if assert.NotNil(t, e.ValueFrom, "%s comes from a Secret", key) &&
						assert.NotNil(t, e.ValueFrom.SecretKeyRef, "%s comes from a Secret", key) {
						assert.Equal(t, "baton-secrets", e.ValueFrom.SecretKeyRef.Name)
						assert.Equal(t, key, e.ValueFrom.SecretKeyRef.Key)
					}
					assert.Empty(t, e.Value, "%s has no literal value", key)
					continue
				}
				assert.True(t, strings.TrimSpace(e.Value) != "" || e.ValueFrom != nil, "environment %s has a value", key)
			}

			svcNode, ok := objs["Service"][name]
			require.True(t, ok, "Service %s", name)
			var svc k8sService
			require.NoError(t, svcNode.Decode(&svc))
			assert.True(t, isSubset(svc.Spec.Selector, podLabels), "Service selects the Deployment's pods")
			require.NotEmpty(t, svc.Spec.Ports)
			for _, p := range svc.Spec.Ports {
				target := p.TargetPort
				if target == "" {
					target = strconv.Itoa(p.Port)
				}
				assert.Equal(t, 8080, ports[target], "Service port %d reaches the container's 8080", p.Port)
			}
		})
	}
}
