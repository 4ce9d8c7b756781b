package openapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// document is the part of an OpenAPI 3.1 document the page renders and the tests check.
// Mappings whose order matters to readers (paths, responses, properties) keep it.
type document struct {
	OpenAPI string `yaml:"openapi"`
	Info    struct {
		Title       string `yaml:"title"`
		Version     string `yaml:"version"`
		Summary     string `yaml:"summary"`
		Description string `yaml:"description"`
	} `yaml:"info"`
	Servers []struct {
		URL         string `yaml:"url"`
		Description string `yaml:"description"`
	} `yaml:"servers"`
	Security   []map[string][]string `yaml:"security"`
	Tags       []tag                 `yaml:"tags"`
	Paths      ordered[pathItem]     `yaml:"paths"`
	Components components            `yaml:"components"`
	Catalogue  []catalogueEntry      `yaml:"x-error-catalogue"`
}

type tag struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

type components struct {
	SecuritySchemes ordered[securityScheme] `yaml:"securitySchemes"`
	Parameters      map[string]*parameter   `yaml:"parameters"`
	Headers         map[string]*header      `yaml:"headers"`
	Responses       map[string]*response    `yaml:"responses"`
	Schemas         ordered[*schema]        `yaml:"schemas"`
}

type securityScheme struct {
	Type        string `yaml:"type"`
	Scheme      string `yaml:"scheme"`
	In          string `yaml:"in"`
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// catalogueEntry is one reason of the `x-error-catalogue` extension.
type catalogueEntry struct {
	Reason string `yaml:"reason"`
	Code   int    `yaml:"code"`
	Status int    `yaml:"status"`
}

// methods are the operation keys of a path item, in the order the page lists them.
var methods = []string{"get", "put", "post", "patch", "delete", "head", "options", "trace"}

// pathItem is one path's operations, in document order, and the parameters they share.
type pathItem struct {
	Parameters []*parameter
	Operations []methodOperation
}

type methodOperation struct {
	Method string // upper case
	*operation
}

// UnmarshalYAML reads the operations and the shared parameters of a path item.
func (p *pathItem) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a path item must be a mapping", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		switch {
		case key == "parameters":
			if err := value.Decode(&p.Parameters); err != nil {
				return err
			}
		case slices.Contains(methods, key):
			op := &operation{}
			if err := value.Decode(op); err != nil {
				return err
			}
			p.Operations = append(p.Operations, methodOperation{Method: strings.ToUpper(key), operation: op})
		}
	}
	return nil
}

type operation struct {
	Tags        []string `yaml:"tags"`
	Summary     string   `yaml:"summary"`
	Description string   `yaml:"description"`
	OperationID string   `yaml:"operationId"`
	Deprecated  bool     `yaml:"deprecated"`
	// MapsTo is `x-maps-to` of a compatibility path: the method and path answering it.
	MapsTo string `yaml:"x-maps-to"`
	// ServedBy is `x-served-by`: ServedBy for the gateway's own operations.
	ServedBy string `yaml:"x-served-by"`
	// Security is nil when the operation inherits the document's.
	Security    *[]map[string][]string `yaml:"security"`
	Parameters  []*parameter           `yaml:"parameters"`
	RequestBody *requestBody           `yaml:"requestBody"`
	Responses   ordered[*response]     `yaml:"responses"`
}

type parameter struct {
	Ref         string  `yaml:"$ref"`
	Name        string  `yaml:"name"`
	In          string  `yaml:"in"`
	Description string  `yaml:"description"`
	Required    bool    `yaml:"required"`
	Deprecated  bool    `yaml:"deprecated"`
	Schema      *schema `yaml:"schema"`
}

type requestBody struct {
	Description string             `yaml:"description"`
	Required    bool               `yaml:"required"`
	Content     ordered[mediaType] `yaml:"content"`
}

type mediaType struct {
	Schema *schema `yaml:"schema"`
}

type response struct {
	Ref         string             `yaml:"$ref"`
	Description string             `yaml:"description"`
	Headers     ordered[*header]   `yaml:"headers"`
	Content     ordered[mediaType] `yaml:"content"`
}

type header struct {
	Ref         string  `yaml:"$ref"`
	Description string  `yaml:"description"`
	Schema      *schema `yaml:"schema"`
}

// schema is the part of a JSON Schema the page shows.
type schema struct {
	Ref                  string           `yaml:"$ref"`
	Type                 typeList         `yaml:"type"`
	Format               string           `yaml:"format"`
	Description          string           `yaml:"description"`
	Enum                 []any            `yaml:"enum"`
	Const                any              `yaml:"const"`
	Default              any              `yaml:"default"`
	Items                *schema          `yaml:"items"`
	Properties           ordered[*schema] `yaml:"properties"`
	AdditionalProperties *additional      `yaml:"additionalProperties"`
	Required             []string         `yaml:"required"`
	AllOf                []*schema        `yaml:"allOf"`
	OneOf                []*schema        `yaml:"oneOf"`
	AnyOf                []*schema        `yaml:"anyOf"`
	ReadOnly             bool             `yaml:"readOnly"`
	WriteOnly            bool             `yaml:"writeOnly"`
	Deprecated           bool             `yaml:"deprecated"`
	Minimum              *float64         `yaml:"minimum"`
	Maximum              *float64         `yaml:"maximum"`
	MinLength            *int             `yaml:"minLength"`
	MaxLength            *int             `yaml:"maxLength"`
	Pattern              string           `yaml:"pattern"`
}

// typeList is a schema's `type`: one name, or (OpenAPI 3.1) several.
type typeList []string

// UnmarshalYAML reads a type name or a list of them.
func (t *typeList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*t = typeList{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*t = list
	return nil
}

// additional is `additionalProperties`: a boolean or a schema.
type additional struct {
	Allowed bool
	Schema  *schema
}

// UnmarshalYAML reads a boolean or a schema.
func (a *additional) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		return n.Decode(&a.Allowed)
	}
	a.Allowed = true
	return n.Decode(&a.Schema)
}

// ordered is a mapping that keeps the order of its keys.
type ordered[T any] []entry[T]

type entry[T any] struct {
	Key   string
	Value T
}

// UnmarshalYAML reads a mapping in document order.
func (o *ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping", n.Line)
	}
	out := make(ordered[T], 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		var v T
		if err := n.Content[i+1].Decode(&v); err != nil {
			return err
		}
		out = append(out, entry[T]{Key: n.Content[i].Value, Value: v})
	}
	*o = out
	return nil
}

// get returns the value under key.
func (o ordered[T]) get(key string) (T, bool) {
	for _, e := range o {
		if e.Key == key {
			return e.Value, true
		}
	}
	var zero T
	return zero, false
}

// parse reads the document and resolves nothing: references stay references.
func parse(raw []byte) (*document, error) {
	var doc document
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("parse the document: %w", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		return nil, fmt.Errorf("the document is OpenAPI %q, not 3.1", doc.OpenAPI)
	}
	if len(doc.Paths) == 0 {
		return nil, errors.New("the document has no paths")
	}
	return &doc, nil
}

// refName returns the component name a local reference points to: "Workflow" for
// "#/components/schemas/Workflow".
func refName(ref string) string {
	return ref[strings.LastIndexByte(ref, '/')+1:]
}

// parameter resolves p against the components.
func (d *document) parameter(p *parameter) *parameter {
	if p.Ref != "" {
		if c, ok := d.Components.Parameters[refName(p.Ref)]; ok {
			return c
		}
	}
	return p
}

// response resolves r against the components; a description next to the reference
// replaces the component's, as OpenAPI 3.1 has it.
func (d *document) response(r *response) *response {
	if r.Ref == "" {
		return r
	}
	c, ok := d.Components.Responses[refName(r.Ref)]
	if !ok {
		return r
	}
	out := *c
	if r.Description != "" {
		out.Description = r.Description
	}
	return &out
}

// header resolves h against the components.
func (d *document) header(h *header) *header {
	if h.Ref != "" {
		if c, ok := d.Components.Headers[refName(h.Ref)]; ok {
			return c
		}
	}
	return h
}

// security returns the requirements in force for op: its own, else the document's.
func (d *document) security(op *operation) []map[string][]string {
	if op.Security != nil {
		return *op.Security
	}
	return d.Security
}

// parameters returns op's parameters after the path's, resolved, an operation's replacing a
// path's of the same name and location.
func (d *document) parameters(item pathItem, op *operation) []*parameter {
	var out []*parameter
	for _, p := range item.Parameters {
		out = append(out, d.parameter(p))
	}
	for _, p := range op.Parameters {
		p = d.parameter(p)
		out = slices.DeleteFunc(out, func(q *parameter) bool { return q.Name == p.Name && q.In == p.In })
		out = append(out, p)
	}
	return out
}
