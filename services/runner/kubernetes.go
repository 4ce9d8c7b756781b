package runner

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/baton-flow/baton/services/runner/internal/executor"
)

// Executor choices (BATON_RUNNER_EXECUTOR) for steps that name an image.
const (
	// ExecutorAuto runs them in Docker when its socket exists, else as local processes.
	ExecutorAuto = ""
	// ExecutorProcess runs every step as a local process.
	ExecutorProcess = "process"
	// ExecutorDocker is ExecutorAuto, said explicitly.
	ExecutorDocker = "docker"
	// ExecutorKubernetes runs them as Kubernetes Jobs.
	ExecutorKubernetes = "kubernetes"
)

// serviceAccountNamespace is where a Pod reads its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// KubernetesConfig configures the Kubernetes executor.
type KubernetesConfig struct {
	// Kubeconfig is a kubeconfig file's path (BATON_RUNNER_KUBECONFIG); empty uses the
	// in-cluster configuration of the runner's Pod.
	Kubeconfig string
	// Namespace holds the steps' Jobs (BATON_RUNNER_K8S_NAMESPACE); default the
	// kubeconfig context's namespace, or in a cluster the runner's own.
	Namespace string
	// ServiceAccount runs the steps' Pods (BATON_RUNNER_K8S_SERVICE_ACCOUNT); empty, the
	// namespace's default, with no API token mounted.
	ServiceAccount string
	// NodeSelector places the steps' Pods (BATON_RUNNER_K8S_NODE_SELECTOR, key=value
	// pairs separated by commas).
	NodeSelector map[string]string
	// CPU and Memory are each step container's request and limit
	// (BATON_RUNNER_K8S_CPU, BATON_RUNNER_K8S_MEMORY, Kubernetes quantities: 500m, 1Gi).
	CPU, Memory string
	// Owner labels the runner's Jobs so that it finds them after a restart: BATON_RUNNER_ID
	// when set, else the host name with a hash of the work directory, both stable for a
	// StatefulSet's Pod with a volume.
	Owner string
}

// kubernetesFromEnv reads the Kubernetes executor's settings.
func kubernetesFromEnv(getenv func(string) string) (KubernetesConfig, error) {
	k := KubernetesConfig{
		Kubeconfig:     strings.TrimSpace(getenv("BATON_RUNNER_KUBECONFIG")),
		Namespace:      strings.TrimSpace(getenv("BATON_RUNNER_K8S_NAMESPACE")),
		ServiceAccount: strings.TrimSpace(getenv("BATON_RUNNER_K8S_SERVICE_ACCOUNT")),
		CPU:            strings.TrimSpace(getenv("BATON_RUNNER_K8S_CPU")),
		Memory:         strings.TrimSpace(getenv("BATON_RUNNER_K8S_MEMORY")),
		Owner:          strings.TrimSpace(getenv("BATON_RUNNER_ID")),
	}
	if v := strings.TrimSpace(getenv("BATON_RUNNER_K8S_NODE_SELECTOR")); v != "" {
		k.NodeSelector = map[string]string{}
		for pair := range strings.SplitSeq(v, ",") {
			key, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || strings.TrimSpace(key) == "" {
				return k, fmt.Errorf("BATON_RUNNER_K8S_NODE_SELECTOR: %q is not key=value", pair)
			}
			k.NodeSelector[strings.TrimSpace(key)] = strings.TrimSpace(value)
		}
	}
	if _, err := k.resources(); err != nil {
		return k, err
	}
	return k, nil
}

func (k KubernetesConfig) resources() (corev1.ResourceRequirements, error) {
	var r corev1.ResourceRequirements
	for _, q := range []struct {
		env, value string
		name       corev1.ResourceName
	}{{"BATON_RUNNER_K8S_CPU", k.CPU, corev1.ResourceCPU}, {"BATON_RUNNER_K8S_MEMORY", k.Memory, corev1.ResourceMemory}} {
		if q.value == "" {
			continue
		}
		v, err := resource.ParseQuantity(q.value)
		if err != nil || v.Sign() <= 0 {
			return r, fmt.Errorf("%s: %q is not a positive quantity such as 500m or 1Gi", q.env, q.value)
		}
		if r.Requests == nil {
			r.Requests, r.Limits = corev1.ResourceList{}, corev1.ResourceList{}
		}
		r.Requests[q.name], r.Limits[q.name] = v, v
	}
	return r, nil
}

// newKubernetes connects the Kubernetes executor.
func newKubernetes(k KubernetesConfig, workDir string, logger *slog.Logger) (*executor.Kubernetes, error) {
	var restCfg *rest.Config
	namespace := k.Namespace
	if k.Kubeconfig != "" {
		loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: k.Kubeconfig}, &clientcmd.ConfigOverrides{})
		cfg, err := loader.ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("BATON_RUNNER_KUBECONFIG: %w", err)
		}
		restCfg = cfg
		if namespace == "" {
			if namespace, _, err = loader.Namespace(); err != nil {
				return nil, fmt.Errorf("BATON_RUNNER_KUBECONFIG: %w", err)
			}
		}
	} else {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes executor: not in a cluster (%w); set BATON_RUNNER_KUBECONFIG", err)
		}
		restCfg = cfg
		if namespace == "" {
			b, err := os.ReadFile(serviceAccountNamespace)
			if err != nil {
				return nil, fmt.Errorf("kubernetes executor: set BATON_RUNNER_K8S_NAMESPACE: %w", err)
			}
			namespace = strings.TrimSpace(string(b))
		}
	}
	if namespace == "" {
		return nil, errors.New("kubernetes executor: set BATON_RUNNER_K8S_NAMESPACE")
	}
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes executor: %w", err)
	}
	resources, err := k.resources()
	if err != nil {
		return nil, err
	}
	owner := k.Owner
	if owner == "" {
		owner = defaultOwner(workDir)
	}
	return executor.NewKubernetes(client, nil, executor.KubernetesOptions{
		Namespace: namespace, Owner: owner, ServiceAccount: k.ServiceAccount,
		NodeSelector: k.NodeSelector, Resources: resources, Logger: logger,
	})
}

// defaultOwner names a runner by its host and work directory, whose journal says which
// attempts it holds.
func defaultOwner(workDir string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "runner"
	}
	host = strings.Trim(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			return r
		}
		return '-'
	}, host), "-.")
	if len(host) > 52 {
		host = strings.Trim(host[:52], "-.")
	}
	sum := sha256.Sum256([]byte(workDir))
	return cmp.Or(host, "runner") + "-" + hex.EncodeToString(sum[:5])
}

// adopt deletes the Jobs a previous process of the runner started for attempts it no
// longer follows; Recover has taken up the others. A failure leaves them for the next
// start, or for their TTL.
func (s *Service) adopt(ctx context.Context) {
	n, err := s.kube.Adopt(ctx, s.worker.Following)
	if err != nil {
		s.log.Warn("cannot take up the kubernetes jobs of a previous start", "err", err)
		return
	}
	if n > 0 {
		s.log.Info("deleted kubernetes jobs of attempts no longer held", "jobs", n)
	}
}
