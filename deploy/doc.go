// Package deploy holds checks of Baton's deployment files: the compose file at the
// repository root, the Dockerfile, the OpenTelemetry collector and Prometheus
// configuration, and the Kubernetes kustomizations under deploy/kubernetes, rendered with
// kustomize and validated with kubeconform against schemas made offline from the
// Kubernetes OpenAPI document that kustomize's kyaml embeds. It has no code of
// its own; its tests parse those files and verify that every Baton process is built,
// configured, wired to its infrastructure and health-checked the same way.
package deploy
