package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// docURL is where the document is registered with the schema compiler.
const docURL = "mem:///openapi.json"

// bodies validates bodies with the document's schemas, each compiled once: kin-openapi
// compiles a JSON Schema 2020-12 schema anew for every value it validates, tens of
// milliseconds for a run, which would make the suites checking thousands of exchanges
// measurably slower.
type bodies struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	compiled map[string]*jsonschema.Schema
}

// newBodies registers the document (YAML or JSON) with a JSON Schema 2020-12 compiler,
// the dialect of OpenAPI 3.1's schemas, formats asserted.
func newBodies(doc []byte) (*bodies, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, err
	}
	v, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource(docURL, v); err != nil {
		return nil, err
	}
	return &bodies{compiler: c, compiled: map[string]*jsonschema.Schema{}}, nil
}

// jsonValue turns a decoded YAML value into the JSON value the validator takes.
func jsonValue(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(raw))
}

// schema returns the compiled schema at ptr, a JSON pointer into the document.
func (b *bodies) schema(ptr string) (*jsonschema.Schema, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.compiled[ptr]; ok {
		return s, nil
	}
	s, err := b.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, fmt.Errorf("contract: compile the schema at %s: %w", ptr, err)
	}
	b.compiled[ptr] = s
	return s, nil
}

// validate checks body, of media type mediaType, against the schema at ptr and says what
// does not match ("" when all does).
func (b *bodies) validate(ptr, mediaType string, body []byte) (string, error) {
	s, err := b.schema(ptr)
	if err != nil {
		return "", err
	}
	v, err := decode(mediaType, body)
	if err != nil {
		return fmt.Sprintf("a %s body that does not decode: %v", mediaType, err), nil
	}
	if err := s.Validate(v); err != nil {
		return schemaProblem(err), nil
	}
	return "", nil
}

// decode reads a body by its media type.
func decode(mediaType string, body []byte) (any, error) {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return nil, err
	}
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		return jsonschema.UnmarshalJSON(bytes.NewReader(body))
	case mt == "application/yaml" || mt == "application/x-yaml":
		var v any
		if err := yaml.Unmarshal(body, &v); err != nil {
			return nil, err
		}
		return jsonValue(v)
	case mt == "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(q))
		for k, vs := range q {
			out[k] = vs[0]
		}
		return out, nil
	case strings.HasPrefix(mt, "text/"):
		return string(body), nil
	}
	return nil, fmt.Errorf("no decoder for %s", mt)
}

// schemaProblem says where a value breaks its schema and how, one place a line; the
// validator's first line names only the schema.
func schemaProblem(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "\n"); ok {
		var lines []string
		for _, l := range strings.Split(rest, "\n") {
			lines = append(lines, strings.TrimPrefix(strings.TrimSpace(l), "- "))
		}
		msg = strings.Join(lines, "; ")
	}
	return msg
}

// pointer is the JSON pointer of tokens.
func pointer(tokens ...string) string {
	var b strings.Builder
	for _, t := range tokens {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
		b.WriteString("/" + url.PathEscape(t))
	}
	return b.String()
}

// refPointer is the pointer of a document-local $ref ("#/components/…").
func refPointer(ref string) string { return strings.TrimPrefix(ref, "#") }

// mediaKey finds the media type of content that declares contentType, with its key.
func mediaKey(content openapi3.Content, contentType string) (string, *openapi3.MediaType) {
	mt := content.Get(contentType)
	if mt == nil {
		return "", nil
	}
	for k, v := range content {
		if v == mt {
			return k, mt
		}
	}
	return "", nil
}

// responseKey is the key under which responses declares status: exact, a range, default.
func responseKey(responses *openapi3.Responses, status int) string {
	for _, k := range []string{strconv.Itoa(status), strconv.Itoa(status/100) + "XX", "default"} {
		if responses.Value(k) != nil {
			if k == "default" && status < 400 {
				return ""
			}
			return k
		}
	}
	return ""
}
