package runner

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/services/runner/internal/executor"
)

func TestConfigExecutor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "default", env: map[string]string{}},
		{name: "process", env: map[string]string{"BATON_RUNNER_EXECUTOR": "process"}, want: Config{Executor: ExecutorProcess}},
		{
			name: "kubernetes",
			env: map[string]string{
				"BATON_RUNNER_EXECUTOR": "kubernetes", "BATON_RUNNER_K8S_NAMESPACE": "steps", "BATON_RUNNER_ID": "runner-0",
				"BATON_RUNNER_KUBECONFIG": "/etc/kube/config", "BATON_RUNNER_K8S_SERVICE_ACCOUNT": "builder",
				"BATON_RUNNER_K8S_NODE_SELECTOR": "pool=steps, zone = a", "BATON_RUNNER_K8S_CPU": "500m", "BATON_RUNNER_K8S_MEMORY": "1Gi",
			},
			want: Config{Executor: ExecutorKubernetes, Kubernetes: KubernetesConfig{
				Kubeconfig: "/etc/kube/config", Namespace: "steps", ServiceAccount: "builder",
				NodeSelector: map[string]string{"pool": "steps", "zone": "a"}, CPU: "500m", Memory: "1Gi", Owner: "runner-0",
			}},
		},
		{name: "unknown executor", env: map[string]string{"BATON_RUNNER_EXECUTOR": "nomad"}, wantErr: `BATON_RUNNER_EXECUTOR: "nomad" is none of docker, kubernetes or process`},
		{name: "bad selector", env: map[string]string{"BATON_RUNNER_EXECUTOR": "kubernetes", "BATON_RUNNER_K8S_NODE_SELECTOR": "pool"}, wantErr: `BATON_RUNNER_K8S_NODE_SELECTOR: "pool" is not key=value`},
		{name: "bad cpu", env: map[string]string{"BATON_RUNNER_EXECUTOR": "kubernetes", "BATON_RUNNER_K8S_CPU": "lots"}, wantErr: `BATON_RUNNER_K8S_CPU: "lots" is not a positive quantity such as 500m or 1Gi`},
		{name: "negative memory", env: map[string]string{"BATON_RUNNER_EXECUTOR": "kubernetes", "BATON_RUNNER_K8S_MEMORY": "-1Gi"}, wantErr: `BATON_RUNNER_K8S_MEMORY: "-1Gi" is not a positive quantity such as 500m or 1Gi`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ConfigFromEnv(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want.Executor, cfg.Executor)
			assert.Equal(t, tt.want.Kubernetes, cfg.Kubernetes)
		})
	}
}

func TestKubernetesResources(t *testing.T) {
	t.Parallel()
	r, err := KubernetesConfig{CPU: "500m", Memory: "1Gi"}.resources()
	require.NoError(t, err)
	assert.True(t, r.Requests.Cpu().Equal(resource.MustParse("500m")))
	assert.True(t, r.Limits.Memory().Equal(resource.MustParse("1Gi")))
	none, err := KubernetesConfig{}.resources()
	require.NoError(t, err)
	assert.Nil(t, none.Requests)
}

func TestExecutorsKubernetes(t *testing.T) {
	t.Parallel()
	kube, err := executor.NewKubernetes(fake.NewClientset(), nil, executor.KubernetesOptions{Namespace: "steps", Owner: "runner-0"})
	require.NoError(t, err)
	pick := executors("", kube, nil)
	assert.Same(t, kube, pick(events.TaskSpec{Image: "alpine", Script: "true"}))
	_, isProcess := pick(events.TaskSpec{Script: "true"}).(*executor.Process)
	assert.True(t, isProcess, "a step without an image runs as a process")
}

func TestDefaultOwner(t *testing.T) {
	t.Parallel()
	a, b := defaultOwner("/var/lib/baton"), defaultOwner("/srv/baton")
	assert.Equal(t, a, defaultOwner("/var/lib/baton"), "stable across starts")
	assert.NotEqual(t, a, b, "runners of one host differ by work directory")
	for _, o := range []string{a, b} {
		assert.LessOrEqual(t, len(o), 63)
		assert.Regexp(t, `^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`, o)
		_, err := executor.NewKubernetes(fake.NewClientset(), nil, executor.KubernetesOptions{Namespace: "n", Owner: o})
		assert.NoError(t, err, strings.TrimSpace(o))
	}
}
