package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/yannh/kubeconform/pkg/resource"
	"github.com/yannh/kubeconform/pkg/validator"
	"gopkg.in/yaml.v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
)

// The kustomizations `kubectl apply -k` takes: Baton with its infrastructure, Baton alone,
// the infrastructure alone.
var kustomizations = []string{k8sDir, filepath.Join(k8sDir, "base"), filepath.Join(k8sDir, "infra")}

// k8sObject is one rendered object: its kind, name and namespace, the YAML kustomize
// wrote, and that YAML decoded.
type k8sObject struct {
	Kind, Name, Namespace string
	YAML                  []byte
	Doc                   map[string]any
}

func (o k8sObject) String() string { return o.Kind + "/" + o.Name }

var (
	// kustomize's OpenAPI data is global, so renderings happen one at a time, and not
	// while the schemas are made from it.
	renderMu  sync.Mutex
	renderOut = map[string][]k8sObject{}
)

// render runs kustomize (the library `kubectl apply -k` embeds) on dir, with its default
// options: a kustomization reads no file outside its folder.
func render(t *testing.T, dir string) []k8sObject {
	t.Helper()
	renderMu.Lock()
	defer renderMu.Unlock()
	if objs, ok := renderOut[dir]; ok {
		return objs
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), dir)
	require.NoError(t, err, "kustomize build %s", dir)
	var objs []k8sObject
	for _, r := range resMap.Resources() {
		y, err := r.AsYAML()
		require.NoError(t, err)
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal(y, &doc))
		objs = append(objs, k8sObject{Kind: r.GetKind(), Name: r.GetName(), Namespace: r.GetNamespace(), YAML: y, Doc: doc})
	}
	require.NotEmpty(t, objs, "kustomize build %s", dir)
	renderOut[dir] = objs
	return objs
}

// ---------------------------------------------------------------- schemas

// schemaKubernetesVersion is the release of the Kubernetes OpenAPI document that
// sigs.k8s.io/kustomize/kyaml embeds, from which the schemas are made.
const schemaKubernetesVersion = "v1.21.2"

// schemaAliases are API versions newer than that document whose schema is an older
// version's: autoscaling/v2 went GA in Kubernetes 1.23 with v2beta2's fields unchanged.
var schemaAliases = map[string]string{
	"autoscaling/v2/HorizontalPodAutoscaler": "io.k8s.api.autoscaling.v2beta2.HorizontalPodAutoscaler",
}

var schemaDir = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "baton-k8s-schemas-")
	if err != nil {
		return "", err
	}
	return dir, writeSchemas(dir)
})

// writeSchemas writes one standalone JSON schema per kind and API version into dir, named
// as kubeconform looks them up ({{ .ResourceKind }}{{ .KindSuffix }}.json), from the
// Kubernetes OpenAPI definitions kyaml embeds, so that validation needs no network. They
// are strict as kubeconform's "-strict" schemas are: an object field the API does not
// have is an error. Like openapi2jsonschema, an int-or-string takes either, and a
// quantity a string or a number.
func writeSchemas(dir string) error {
	renderMu.Lock() // kustomize reads the same global document
	raw, err := json.Marshal(openapi.Schema())
	renderMu.Unlock()
	if err != nil {
		return err
	}
	var root struct {
		Definitions map[string]map[string]any `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &root); err != nil {
		return err
	}
	defs := root.Definitions
	if len(defs) == 0 {
		return fmt.Errorf("kyaml embeds no OpenAPI definitions")
	}
	for name, def := range defs {
		defs[name] = strictSchema(def).(map[string]any)
	}
	roots := map[string]string{} // group/version/Kind → definition
	for name, def := range defs {
		gvks, _ := def["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gvk, _ := g.(map[string]any)
			group, _ := gvk["group"].(string)
			version, _ := gvk["version"].(string)
			kind, _ := gvk["kind"].(string)
			apiVersion := version
			if group != "" {
				apiVersion = group + "/" + version
			}
			roots[apiVersion+"/"+kind] = name
		}
	}
	maps.Copy(roots, schemaAliases)
	for key, name := range roots {
		i := strings.LastIndex(key, "/")
		apiVersion, kind := key[:i], key[i+1:]
		schema := map[string]any{}
		maps.Copy(schema, defs[name])
		delete(schema, "x-kubernetes-group-version-kind")
		// The object is of this kind and version only.
		props := map[string]any{}
		if p, ok := schema["properties"].(map[string]any); ok {
			maps.Copy(props, p)
		}
		props["apiVersion"] = map[string]any{"type": "string", "enum": []any{apiVersion}}
		props["kind"] = map[string]any{"type": "string", "enum": []any{kind}}
		schema["properties"] = props
		reached := map[string]any{}
		collectRefs(schema, defs, reached)
		schema["definitions"] = reached
		out, err := json.Marshal(schema)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, schemaFileName(apiVersion, kind)), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// schemaFileName is kubeconform's name for a kind's schema: the kind, the first part of
// its group and its version, in lower case (deployment-apps-v1.json, service-v1.json).
func schemaFileName(apiVersion, kind string) string {
	group, version, found := strings.Cut(apiVersion, "/")
	suffix := "-" + strings.ToLower(strings.Split(group, ".")[0])
	if found {
		suffix += "-" + strings.ToLower(version)
	}
	return strings.ToLower(kind) + suffix + ".json"
}

// strictSchema rewrites one OpenAPI v2 schema as JSON schema for validation.
func strictSchema(v any) any {
	switch s := v.(type) {
	case map[string]any:
		if s["format"] == "int-or-string" {
			return map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}}
		}
		out := map[string]any{}
		for k, child := range s {
			switch k {
			case "properties", "definitions":
				props := map[string]any{}
				for name, p := range child.(map[string]any) {
					props[name] = strictSchema(p)
				}
				out[k] = props
			case "items", "additionalProperties":
				out[k] = strictSchema(child)
			default:
				out[k] = child
			}
		}
		if _, hasProps := out["properties"]; hasProps {
			if _, set := out["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out
	default:
		return v
	}
}

// collectRefs adds to reached every definition v refers to, and theirs, rewritten as
// definitions of the standalone schema.
func collectRefs(v any, defs map[string]map[string]any, reached map[string]any) {
	switch s := v.(type) {
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/definitions/")
			if _, done := reached[name]; !done {
				def := defs[name]
				if name == "io.k8s.apimachinery.pkg.api.resource.Quantity" {
					def = map[string]any{"oneOf": []any{map[string]any{"type": "string"}, map[string]any{"type": "number"}}}
				}
				reached[name] = def
				collectRefs(def, defs, reached)
			}
		}
		for _, child := range s {
			collectRefs(child, defs, reached)
		}
	case []any:
		for _, child := range s {
			collectRefs(child, defs, reached)
		}
	}
}

func newValidator(t *testing.T) validator.Validator {
	t.Helper()
	dir, err := schemaDir()
	require.NoError(t, err, "schemas from kyaml's OpenAPI %s", schemaKubernetesVersion)
	v, err := validator.New([]string{dir + "/{{ .ResourceKind }}{{ .KindSuffix }}.json"}, validator.Opts{Strict: true})
	require.NoError(t, err)
	return v
}

func validate(v validator.Validator, name string, doc []byte) validator.Result {
	return v.ValidateResource(resource.Resource{Path: name, Bytes: doc})
}

func TestMain(m *testing.M) {
	code := m.Run()
	// The schemas, if a test made them.
	if dir, err := schemaDir(); err == nil && dir != "" {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

// ---------------------------------------------------------------- tests

// Every object of every kustomization is valid against the Kubernetes schema of its kind,
// strictly: a misspelt or misplaced field fails, as does a kind without a schema.
func TestKubernetesObjectsAreValid(t *testing.T) {
	t.Parallel()
	v := newValidator(t)
	for _, dir := range kustomizations {
		kinds := map[string]int{}
		for _, o := range render(t, dir) {
			res := validate(v, dir+": "+o.String(), o.YAML)
			assert.Equal(t, validator.Valid, res.Status, "%s: %s: %v %v", dir, o, res.Err, res.ValidationErrors)
			kinds[o.Kind]++
		}
		t.Logf("%s: %v validated", dir, kinds)
	}
}

// The validator and its schemas reject what the API server would.
func TestKubernetesValidatorRejects(t *testing.T) {
	t.Parallel()
	v := newValidator(t)
	const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: x
spec:
  selector:
    matchLabels: {app: x}
  template:
    metadata:
      labels: {app: x}
    spec:
      containers:
        - name: x
          image: x:1.0
%s`
	tests := []struct {
		name string
		doc  string
		want validator.Status
	}{
		{"a valid deployment", fmt.Sprintf(deployment, "          ports: [{containerPort: 80}]"), validator.Valid},
		{"an unknown field", fmt.Sprintf(deployment, "          livenesProbe: {httpGet: {path: /, port: 80}}"), validator.Invalid},
		{"a field of the wrong type", fmt.Sprintf(deployment, "          ports: [{containerPort: eighty}]"), validator.Invalid},
		{"an int-or-string as a name", fmt.Sprintf(deployment, "          readinessProbe: {httpGet: {path: /, port: http}}"), validator.Valid},
		{"an int-or-string as an object", fmt.Sprintf(deployment, "          readinessProbe: {httpGet: {path: /, port: {n: 1}}}"), validator.Invalid},
		{"a quantity as a number", fmt.Sprintf(deployment, "          resources: {requests: {cpu: 1, memory: 1Gi}}"), validator.Valid},
		{"a missing required field", "apiVersion: v1\nkind: Service\nmetadata: {name: x}\nspec:\n  ports: [{name: http}]\n", validator.Invalid},
		{"an autoscaling/v2 field misspelt", "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: x}\nspec:\n  scaleTargetRef: {kind: Deployment, name: x}\n  maxReplica: 3\n", validator.Invalid},
		{"a kind with no schema", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: x}\n", validator.Error},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := validate(v, tt.name, []byte(tt.doc))
			assert.Equal(t, tt.want, res.Status, "%v %v", res.Err, res.ValidationErrors)
		})
	}
}

// podSpec is a workload's pod template, or nil for other kinds.
func podSpec(o k8sObject) map[string]any {
	switch o.Kind {
	case "Deployment", "StatefulSet", "DaemonSet", "Job":
		return dig[map[string]any](o.Doc, "spec", "template", "spec")
	}
	return nil
}

func podLabels(o k8sObject) map[string]string {
	return stringMap(dig[map[string]any](o.Doc, "spec", "template", "metadata", "labels"))
}

// dig follows keys into nested maps and returns what it finds there as T (T's zero value
// when absent).
func dig[T any](v any, keys ...string) T {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	t, _ := v.(T)
	return t
}

func stringMap(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprint(v)
	}
	return out
}

func containers(spec map[string]any) []map[string]any {
	var out []map[string]any
	for _, key := range []string{"initContainers", "containers"} {
		for _, c := range dig[[]any](spec, key) {
			out = append(out, c.(map[string]any))
		}
	}
	return out
}

var versionTag = regexp.MustCompile(`^[^:@]+:(v?\d+(\.\d+)+)$`)

// Every image of every workload has a version; Baton's all have the same, the one set in
// base/kustomization.yaml. Every container has probes and resources, runs as no root,
// cannot gain privileges, and Baton's have a read-only root filesystem.
func TestKubernetesWorkloads(t *testing.T) {
	t.Parallel()
	batonTags := map[string]bool{}
	workloads := 0
	for _, o := range render(t, k8sDir) {
		spec := podSpec(o)
		if spec == nil {
			continue
		}
		workloads++
		baton := podLabels(o)["app.kubernetes.io/part-of"] == "baton"
		assert.Equal(t, true, dig[any](spec, "securityContext", "runAsNonRoot"), "%s runs as no root", o)
		assert.Equal(t, "RuntimeDefault", dig[string](spec, "securityContext", "seccompProfile", "type"), "%s seccomp", o)
		for _, host := range []string{"hostNetwork", "hostPID", "hostIPC"} {
			assert.NotEqual(t, true, spec[host], "%s: %s", o, host)
		}
		for _, v := range dig[[]any](spec, "volumes") {
			assert.Nil(t, dig[any](v, "hostPath"), "%s: no hostPath volume", o)
		}
		for _, c := range containers(spec) {
			name := o.String() + " " + c["name"].(string)
			image, _ := c["image"].(string)
			m := versionTag.FindStringSubmatch(image)
			if assert.NotNil(t, m, "%s: image %q has a version tag", name, image) && baton {
				assert.True(t, strings.HasPrefix(image, "ghcr.io/baton-flow/baton-"), "%s: image %s", name, image)
				batonTags[m[1]] = true
			}
			assert.NotEqual(t, "Always", c["imagePullPolicy"], "%s: a versioned image is pulled once", name)
			assert.Equal(t, false, dig[any](c, "securityContext", "allowPrivilegeEscalation"), "%s: no privilege escalation", name)
			assert.NotEqual(t, true, dig[any](c, "securityContext", "privileged"), "%s: not privileged", name)
			assert.Contains(t, dig[[]any](c, "securityContext", "capabilities", "drop"), "ALL", "%s drops capabilities", name)
			if baton {
				assert.Equal(t, true, dig[any](c, "securityContext", "readOnlyRootFilesystem"), "%s: read-only root", name)
			}
			for _, r := range []string{"cpu", "memory"} {
				assert.NotEmpty(t, dig[any](c, "resources", "requests", r), "%s: %s request", name, r)
				assert.NotEmpty(t, dig[any](c, "resources", "limits", r), "%s: %s limit", name, r)
			}
			if o.Kind != "Job" {
				assert.NotNil(t, c["readinessProbe"], "%s: readiness probe", name)
				assert.NotNil(t, c["livenessProbe"], "%s: liveness probe", name)
			}
		}
	}
	assert.Len(t, batonTags, 1, "one version for all of Baton's images: %v", batonTags)
	for _, o := range render(t, k8sDir) {
		if o.Kind == "Namespace" {
			assert.Equal(t, "restricted", dig[string](o.Doc, "metadata", "labels", "pod-security.kubernetes.io/enforce"), "%s enforces the restricted Pod Security Standard", o)
		}
	}
	assert.NotContains(t, batonTags, "latest")
	assert.GreaterOrEqual(t, workloads, len(batonServices)+5)
}

// Baton's probes are HTTP on the API port: /ready for readiness, /health for liveness
// (the images have no shell tool to probe with).
func TestKubernetesBatonProbes(t *testing.T) {
	t.Parallel()
	for _, o := range render(t, filepath.Join(k8sDir, "base")) {
		spec := podSpec(o)
		if spec == nil {
			continue
		}
		for _, c := range containers(spec) {
			for probe, path := range map[string]string{"readinessProbe": "/ready", "livenessProbe": "/health"} {
				assert.Equal(t, path, dig[string](c, probe, "httpGet", "path"), "%s %s", o, probe)
				assert.Equal(t, "http", dig[string](c, probe, "httpGet", "port"), "%s %s", o, probe)
			}
		}
	}
}

// No Secret is rendered (the operator creates baton-secrets), and every environment
// variable that holds a secret comes from a secretKeyRef, never a literal value.
func TestKubernetesSecretsComeFromSecretKeyRefs(t *testing.T) {
	t.Parallel()
	secretName := regexp.MustCompile(`(KEY|TOKEN|SECRET|PASSWORD|ACTIVATION_CODE)`)
	checked := 0
	for _, o := range render(t, k8sDir) {
		assert.NotEqual(t, "Secret", o.Kind, "%s: secrets are the operator's, not the manifests'", o)
		if o.Kind == "ConfigMap" {
			for k := range dig[map[string]any](o.Doc, "data") {
				assert.False(t, secretName.MatchString(k), "%s holds %s, a secret", o, k)
			}
		}
		spec := podSpec(o)
		for _, c := range containers(spec) {
			for _, e := range dig[[]any](c, "env") {
				env := e.(map[string]any)
				name := env["name"].(string)
				if !secretName.MatchString(name) && !slices.Contains(secretEnv, name) {
					continue
				}
				checked++
				assert.Nil(t, env["value"], "%s: %s has no literal value", o, name)
				ref := dig[map[string]any](env, "valueFrom", "secretKeyRef")
				if assert.NotNil(t, ref, "%s: %s comes from a secretKeyRef", o, name) {
					assert.Equal(t, "baton-secrets", ref["name"], "%s: %s", o, name)
					assert.Equal(t, name, ref["key"], "%s: %s", o, name)
				}
			}
		}
	}
	assert.GreaterOrEqual(t, checked, 2*len(batonServices), "every Baton process reads at least two secrets")
}

// policy is a NetworkPolicy's ingress side.
type policy struct {
	Name     string
	Selector map[string]string
	Rules    []policyRule
}

type policyRule struct {
	Ports []string // empty: every port
	From  []map[string]any
}

func networkPolicies(objs []k8sObject) []policy {
	var out []policy
	for _, o := range objs {
		if o.Kind != "NetworkPolicy" {
			continue
		}
		p := policy{Name: o.Name, Selector: stringMap(dig[map[string]any](o.Doc, "spec", "podSelector", "matchLabels"))}
		for _, r := range dig[[]any](o.Doc, "spec", "ingress") {
			var rule policyRule
			for _, port := range dig[[]any](r, "ports") {
				rule.Ports = append(rule.Ports, fmt.Sprint(dig[any](port, "port")))
			}
			for _, f := range dig[[]any](r, "from") {
				rule.From = append(rule.From, f.(map[string]any))
			}
			p.Rules = append(p.Rules, rule)
		}
		out = append(out, p)
	}
	return out
}

// podsSelected reports whether a peer without a namespace selector selects pods with
// these labels (matchLabels and matchExpressions' In, NotIn, Exists, DoesNotExist).
func podsSelected(peer map[string]any, labels map[string]string) bool {
	if _, ok := peer["namespaceSelector"]; ok {
		return false
	}
	sel, ok := peer["podSelector"].(map[string]any)
	if !ok {
		return false
	}
	if !isSubset(stringMap(dig[map[string]any](sel, "matchLabels")), labels) && len(dig[map[string]any](sel, "matchLabels")) > 0 {
		return false
	}
	for _, e := range dig[[]any](sel, "matchExpressions") {
		v, has := labels[dig[string](e, "key")]
		values := dig[[]any](e, "values")
		switch dig[string](e, "operator") {
		case "In":
			if !has || !slices.Contains(values, any(v)) {
				return false
			}
		case "NotIn":
			if has && slices.Contains(values, any(v)) {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}

// admits reports whether the rule lets traffic to port in.
func (r policyRule) admits(port string) bool {
	return len(r.Ports) == 0 || slices.Contains(r.Ports, port)
}

// The network policies: a default deny over Baton's pods and the infrastructure's; the
// admin port (8081, /metrics) only from the monitoring namespace or pods labelled to
// scrape; Baton's API port only from Baton's pods and Consul (its health checks), except
// the gateway's, open to all; the infrastructure only from Baton's pods and its own.
func TestKubernetesNetworkPolicies(t *testing.T) {
	t.Parallel()
	objs := render(t, k8sDir)
	policies := networkPolicies(objs)
	denies := map[string]bool{}
	for _, p := range policies {
		if len(p.Rules) == 0 {
			denies[p.Selector["app.kubernetes.io/part-of"]] = true
		}
	}
	assert.True(t, denies["baton"], "a default deny selects Baton's pods")
	assert.True(t, denies["baton-infra"], "a default deny selects the infrastructure's pods")

	isMonitoring := func(peer map[string]any) bool {
		ns := stringMap(dig[map[string]any](peer, "namespaceSelector", "matchLabels"))
		pods := stringMap(dig[map[string]any](peer, "podSelector", "matchLabels"))
		_, hasPods := peer["podSelector"]
		_, hasNS := peer["namespaceSelector"]
		return (hasNS && !hasPods && maps.Equal(ns, map[string]string{"kubernetes.io/metadata.name": "monitoring"})) ||
			(hasPods && !hasNS && maps.Equal(pods, map[string]string{"baton-flow.io/metrics": "scrape"}))
	}
	isBaton := func(peer map[string]any) bool {
		_, hasNS := peer["namespaceSelector"]
		return !hasNS && dig[string](peer, "podSelector", "matchLabels", "app.kubernetes.io/part-of") == "baton"
	}
	// Consul polls each instance's /ready on the API port; without it, instances leave
	// the registry.
	isConsul := func(peer map[string]any) bool {
		_, hasNS := peer["namespaceSelector"]
		return !hasNS && maps.Equal(stringMap(dig[map[string]any](peer, "podSelector", "matchLabels")),
			map[string]string{"app.kubernetes.io/name": "consul", "app.kubernetes.io/part-of": "baton-infra"})
	}
	isInfra := func(peer map[string]any) bool {
		_, hasNS := peer["namespaceSelector"]
		return !hasNS && dig[string](peer, "podSelector", "matchLabels", "app.kubernetes.io/part-of") == "baton-infra"
	}

	for _, o := range objs {
		spec := podSpec(o)
		if spec == nil {
			continue
		}
		labels := podLabels(o)
		var selecting []policy
		for _, p := range policies {
			if isSubset(p.Selector, labels) {
				selecting = append(selecting, p)
			}
		}
		require.NotEmpty(t, selecting, "%s: network policies select its pods", o)
		switch labels["app.kubernetes.io/part-of"] {
		case "baton":
			adminAllowed, consulChecks := false, false
			for _, p := range selecting {
				for _, r := range p.Rules {
					if r.admits("8081") {
						for _, peer := range r.From {
							assert.True(t, isMonitoring(peer), "%s: %s lets %v reach the admin port", o, p.Name, peer)
						}
						adminAllowed = adminAllowed || len(r.From) > 0
					}
					if r.admits("8080") {
						if len(r.From) == 0 {
							assert.Equal(t, "gateway", labels["app.kubernetes.io/name"], "%s: %s opens the API to all", o, p.Name)
						}
						for _, peer := range r.From {
							assert.True(t, isBaton(peer) || isConsul(peer), "%s: %s lets %v reach the API", o, p.Name, peer)
							consulChecks = consulChecks || isConsul(peer)
						}
					}
				}
			}
			assert.True(t, adminAllowed, "%s: the monitoring namespace reaches the admin port", o)
			assert.True(t, consulChecks, "%s: Consul reaches /ready on the API port", o)
		case "baton-infra":
			if labels["app.kubernetes.io/name"] == "mongo" {
				// The runner owns no data and runs the users' scripts.
				runner := map[string]string{"app.kubernetes.io/name": "runner", "app.kubernetes.io/part-of": "baton"}
				for _, p := range selecting {
					for _, r := range p.Rules {
						for _, peer := range r.From {
							assert.False(t, podsSelected(peer, runner), "%s: %s lets the runner in", o, p.Name)
						}
					}
				}
			}
			for _, p := range selecting {
				for _, r := range p.Rules {
					require.NotEmpty(t, r.From, "%s: %s opens a port to all", o, p.Name)
					for _, peer := range r.From {
						assert.True(t, isBaton(peer) || isInfra(peer) || isMonitoring(peer), "%s: %s lets %v in", o, p.Name, peer)
					}
				}
			}
		default:
			t.Errorf("%s: pods labelled neither baton nor baton-infra", o)
		}
	}
}

// The stateless HTTP services scale on an autoscaler that owns their count; every
// workload of more than one replica spreads them over nodes and has a disruption budget;
// the runner keeps its work directory on a volume.
func TestKubernetesScaling(t *testing.T) {
	t.Parallel()
	objs := render(t, k8sDir)
	byKind := map[string]map[string]k8sObject{}
	for _, o := range objs {
		if byKind[o.Kind] == nil {
			byKind[o.Kind] = map[string]k8sObject{}
		}
		byKind[o.Kind][o.Name] = o
	}
	for _, name := range []string{"gateway", "identity", "workflows", "tasks"} {
		hpa, ok := byKind["HorizontalPodAutoscaler"][name]
		if !assert.True(t, ok, "HorizontalPodAutoscaler %s", name) {
			continue
		}
		assert.Equal(t, "Deployment", dig[string](hpa.Doc, "spec", "scaleTargetRef", "kind"))
		assert.Equal(t, name, dig[string](hpa.Doc, "spec", "scaleTargetRef", "name"))
		assert.GreaterOrEqual(t, dig[int](hpa.Doc, "spec", "minReplicas"), 2, "%s stays available", name)
		assert.Nil(t, dig[any](byKind["Deployment"][name].Doc, "spec", "replicas"), "%s: the autoscaler owns the count", name)
	}
	for _, name := range []string{"runs", "schedules", "integrations"} {
		assert.GreaterOrEqual(t, dig[int](byKind["Deployment"][name].Doc, "spec", "replicas"), 2, "%s", name)
	}

	var workloads []k8sObject
	for _, o := range objs {
		if o.Kind == "Deployment" || o.Kind == "StatefulSet" {
			workloads = append(workloads, o)
		}
	}
	for _, w := range workloads {
		if dig[int](w.Doc, "spec", "replicas") != 1 {
			spread := false
			for _, c := range dig[[]any](podSpec(w), "topologySpreadConstraints") {
				spread = spread || (dig[string](c, "topologyKey") == "kubernetes.io/hostname" &&
					isSubset(stringMap(dig[map[string]any](c, "labelSelector", "matchLabels")), podLabels(w)))
			}
			assert.True(t, spread, "%s spreads its replicas over nodes", w)
		}
		if dig[int](w.Doc, "spec", "replicas") == 1 {
			continue // a budget would block every drain
		}
		covered := false
		for _, pdb := range byKind["PodDisruptionBudget"] {
			covered = covered || isSubset(stringMap(dig[map[string]any](pdb.Doc, "spec", "selector", "matchLabels")), podLabels(w))
		}
		assert.True(t, covered, "%s has a PodDisruptionBudget", w)
	}

	runner, ok := byKind["StatefulSet"]["runner"]
	require.True(t, ok, "the runner is a StatefulSet")
	c := containers(podSpec(runner))[0]
	workDir := ""
	for _, e := range dig[[]any](c, "env") {
		switch dig[string](e, "name") {
		case "BATON_RUNNER_WORKDIR":
			workDir = dig[string](e, "value")
		case "BATON_RUNNER_DOCKER_SOCKET":
			assert.Equal(t, "off", dig[string](e, "value"), "the runner has no Docker socket of the node's")
		}
	}
	require.NotEmpty(t, workDir, "BATON_RUNNER_WORKDIR is set")
	claims := map[string]bool{}
	for _, vct := range dig[[]any](runner.Doc, "spec", "volumeClaimTemplates") {
		claims[dig[string](vct, "metadata", "name")] = true
	}
	mounted := false
	for _, m := range dig[[]any](c, "volumeMounts") {
		mounted = mounted || (dig[string](m, "mountPath") == workDir && claims[dig[string](m, "name")])
	}
	assert.True(t, mounted, "the runner's work directory %s is its own volume claim", workDir)
}

// The infrastructure is what compose runs, made to last: a MongoDB replica set and Kafka
// of three, each member with its volume behind a headless Service; Baton's topics with
// compose's partitions; the collector with compose's configuration; and Baton's settings
// point at them.
func TestKubernetesInfrastructure(t *testing.T) {
	t.Parallel()
	objs := render(t, k8sDir)
	find := func(kind, name string) k8sObject {
		for _, o := range objs {
			if o.Kind == kind && o.Name == name {
				return o
			}
		}
		t.Fatalf("%s/%s is not rendered", kind, name)
		return k8sObject{}
	}
	for _, name := range []string{"mongo", "kafka"} {
		sts := find("StatefulSet", name)
		assert.Equal(t, 3, dig[int](sts.Doc, "spec", "replicas"), "%s has three members", name)
		assert.Equal(t, name, dig[string](sts.Doc, "spec", "serviceName"))
		assert.NotEmpty(t, dig[[]any](sts.Doc, "spec", "volumeClaimTemplates"), "%s keeps its data", name)
		svc := find("Service", name)
		assert.Equal(t, "None", dig[string](svc.Doc, "spec", "clusterIP"), "%s's Service is headless", name)
	}
	assert.Contains(t, string(find("Job", "mongo-init").YAML), "rs.initiate")
	find("StatefulSet", "consul")

	// The topics Job creates compose's topics, with their partitions.
	want := map[string]int{}
	for topic, n := range topicPartitions {
		want[topic] = n
		want[topic+".dlq"] = 3
	}
	got := map[string]int{}
	job := containers(podSpec(find("Job", "kafka-topics")))[0]
	for _, e := range dig[[]any](job, "env") {
		if dig[string](e, "name") != "TOPICS" {
			continue
		}
		for _, spec := range strings.Fields(dig[string](e, "value")) {
			topic, n, ok := strings.Cut(spec, ":")
			require.True(t, ok, spec)
			var partitions int
			_, err := fmt.Sscan(n, &partitions)
			require.NoError(t, err, spec)
			got[topic] = partitions
		}
	}
	assert.Equal(t, want, got)

	// The collector's configuration is compose's.
	compose, err := os.ReadFile(otelConfig)
	require.NoError(t, err)
	var collectorConfig string
	for _, o := range objs {
		if o.Kind == "ConfigMap" && strings.HasPrefix(o.Name, "otel-collector-config") {
			collectorConfig = dig[string](o.Doc, "data", "config.yaml")
		}
	}
	assert.Equal(t, string(compose), collectorConfig)
	mounted := false
	for _, v := range dig[[]any](podSpec(find("Deployment", "otel-collector")), "volumes") {
		mounted = mounted || strings.HasPrefix(dig[string](v, "configMap", "name"), "otel-collector-config")
	}
	assert.True(t, mounted, "the collector mounts its configuration")

	// Every host Baton's settings name is a Service here (a StatefulSet's pod is
	// <pod>.<service>).
	services := map[string]bool{}
	for _, o := range objs {
		if o.Kind == "Service" {
			services[o.Name] = true
		}
	}
	config := find("ConfigMap", "baton-config")
	hostPort := regexp.MustCompile(`([a-z0-9.-]+):\d+`)
	for _, key := range []string{"BATON_MONGO_URI", "BATON_KAFKA_BROKERS", "BATON_CONSUL_ADDR", "BATON_OTLP_ENDPOINT"} {
		value := dig[string](config.Doc, "data", key)
		hosts := hostPort.FindAllStringSubmatch(strings.TrimPrefix(strings.TrimPrefix(value, "mongodb://"), "http://"), -1)
		require.NotEmpty(t, hosts, "%s=%s names hosts", key, value)
		for _, h := range hosts {
			labels := strings.Split(h[1], ".")
			assert.True(t, services[labels[len(labels)-1]], "%s: host %s is a Service of the kustomization", key, h[1])
		}
	}
}

// Each kustomization renders every object into namespace baton, and the whole is its two
// parts: nothing defined twice, nothing lost.
func TestKubernetesKustomizations(t *testing.T) {
	t.Parallel()
	ids := func(objs []k8sObject) []string {
		var out []string
		for _, o := range objs {
			out = append(out, o.String())
		}
		slices.Sort(out)
		return out
	}
	for _, dir := range kustomizations {
		for _, o := range render(t, dir) {
			if o.Kind != "Namespace" {
				assert.Equal(t, "baton", o.Namespace, "%s: %s", dir, o)
			}
		}
	}
	parts := append(render(t, kustomizations[1]), render(t, kustomizations[2])...)
	assert.Equal(t, ids(parts), ids(render(t, k8sDir)))
	all := ids(render(t, k8sDir))
	assert.Equal(t, len(all), len(slices.Compact(slices.Clone(all))), "no object defined twice")
	assert.True(t, bytes.Contains(render(t, kustomizations[1])[0].YAML, []byte("kind: Namespace")), "base makes the namespace first")
}
