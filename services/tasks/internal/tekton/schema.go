// Package tekton is the Tekton YAML form of a task: a `Task` of apiVersion
// tekton.dev/v1beta1 or tekton.dev/v1 with exactly one step, and the conversion between it
// and Baton's task.
//
// Why a schema of our own rather than github.com/tektoncd/pipeline's API types: that module
// requires Kubernetes (api, apimachinery, client-go), Knative, go-containerregistry with
// cloud credential helpers and well over a hundred other modules, for the sake of a dozen
// struct fields. So the types below declare exactly the part of Tekton's Task that a
// one-step task uses, and are decoded strictly (yaml.v3 with KnownFields): a field Tekton
// does not have, or one Baton cannot honour (sidecars, volumes, stepTemplate, a step's
// resources or securityContext…), is refused by name rather than silently dropped. Tekton's
// own validation rules for these fields are applied in validate.go.
//
// Baton's fields that Tekton has no place for travel as `baton.io/…` annotations
// (domain.ReservedAnnotations), so JSON → YAML → JSON keeps every field.
package tekton

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// API versions accepted; the newest is written.
const (
	APIVersionV1      = "tekton.dev/v1"
	APIVersionV1Beta1 = "tekton.dev/v1beta1"
	// Kind is the only kind accepted.
	Kind = "Task"
)

// ContentType is the media type of the YAML form.
const ContentType = "application/x-yaml"

type document struct {
	APIVersion string   `yaml:"apiVersion"`
	Kind       string   `yaml:"kind"`
	Metadata   metadata `yaml:"metadata"`
	Spec       taskSpec `yaml:"spec"`
}

type metadata struct {
	Name        string            `yaml:"name"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type taskSpec struct {
	// DisplayName exists in Tekton's TaskSpec too; Baton writes the annotation instead.
	DisplayName string      `yaml:"displayName,omitempty"`
	Description string      `yaml:"description,omitempty"`
	Params      []param     `yaml:"params,omitempty"`
	Results     []result    `yaml:"results,omitempty"`
	Steps       []step      `yaml:"steps"`
	Workspaces  []workspace `yaml:"workspaces,omitempty"`
}

// Tekton's parameter and result types.
const (
	typeString = "string"
	typeArray  = "array"
	typeObject = "object"
)

type param struct {
	Name        string              `yaml:"name"`
	Type        string              `yaml:"type,omitempty"`
	Description string              `yaml:"description,omitempty"`
	Default     *value              `yaml:"default,omitempty"`
	Properties  map[string]property `yaml:"properties,omitempty"`
}

type property struct {
	Type string `yaml:"type,omitempty" json:"type,omitempty"`
}

type result struct {
	Name        string              `yaml:"name"`
	Type        string              `yaml:"type,omitempty"`
	Description string              `yaml:"description,omitempty"`
	Properties  map[string]property `yaml:"properties,omitempty"`
}

type step struct {
	Name       string   `yaml:"name,omitempty"`
	Image      string   `yaml:"image,omitempty"`
	Command    []string `yaml:"command,omitempty"`
	Args       []string `yaml:"args,omitempty"`
	WorkingDir string   `yaml:"workingDir,omitempty"`
	Env        []envVar `yaml:"env,omitempty"`
	Script     string   `yaml:"script,omitempty"`
}

type envVar struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

type workspace struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description,omitempty"`
	MountPath   string `yaml:"mountPath,omitempty"`
	ReadOnly    bool   `yaml:"readOnly,omitempty"`
	Optional    bool   `yaml:"optional,omitempty"`
}

// value is a Tekton parameter value: a string, a list of strings or an object of strings.
type value struct {
	Type   string
	String string
	Array  []string
	Object map[string]string
}

// UnmarshalYAML reads any of the three shapes. Scalars of other YAML types (numbers,
// booleans) are taken as their text, as Tekton does.
func (v *value) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*v = value{Type: typeString, String: n.Value}
	case yaml.SequenceNode:
		var a []string
		if err := n.Decode(&a); err != nil {
			return err
		}
		if a == nil {
			a = []string{}
		}
		*v = value{Type: typeArray, Array: a}
	case yaml.MappingNode:
		var o map[string]string
		if err := n.Decode(&o); err != nil {
			return err
		}
		*v = value{Type: typeObject, Object: o}
	default:
		return fmt.Errorf("line %d: a parameter value must be a string, a list of strings or an object of strings", n.Line)
	}
	return nil
}

// MarshalYAML writes the shape the value has.
func (v value) MarshalYAML() (any, error) {
	switch v.Type {
	case typeArray:
		return v.Array, nil
	case typeObject:
		return v.Object, nil
	}
	return v.String, nil
}

// places names the schema's types in errors: yaml.v3 reports unknown fields by Go type.
var places = map[string]string{
	"tekton.document":  "the Task",
	"tekton.metadata":  "metadata",
	"tekton.taskSpec":  "spec",
	"tekton.param":     "spec.params[]",
	"tekton.property":  "properties",
	"tekton.result":    "spec.results[]",
	"tekton.step":      "spec.steps[]",
	"tekton.envVar":    "spec.steps[].env[]",
	"tekton.workspace": "spec.workspaces[]",
}
