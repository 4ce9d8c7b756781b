package standalone_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/openapi"
)

// hostileRequest is one malformed or hostile request derived from the contract.
type hostileRequest struct {
	op      string // "METHOD /pattern"
	variant string
	method  string
	path    string // escaped, as sent on the request line
	query   string // raw query string
	header  http.Header
	body    []byte
	ctype   string
}

// hostileOutcome is what the gateway answered to one hostileRequest.
type hostileOutcome struct {
	req    hostileRequest
	status int
	body   string
	err    error
}

// TestIntegrationHostileInput sends, for every operation of the OpenAPI document, malformed
// and hostile variants of each path and query parameter, of the body and of the request's
// size, with the admin token, to a standalone Baton. None may answer 5xx, and every error
// answer must be in the contract's error shape.
func TestIntegrationHostileInput(t *testing.T) {
	t.Parallel()
	b := startUnlimited(t)
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	require.NoError(t, err)

	// Real resources, so that hostile values reach past the lookups into the stores.
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token,
		`{"name":"hostile","labels":{"env":"test"},"parameters":[{"name":"greeting","type":"text","value":"hi"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/team/hostile/task", b.token,
		`{"name":"build","type":"template","spec":{"image":"alpine:3","script":"true"}}`)
	require.Equal(t, http.StatusCreated, code, out)
	require.Eventually(t, func() bool {
		code, _ := b.call(t, http.MethodPost, "/api/v2/team/hostile/workflow", b.token,
			`{"name":"build","labels":{"env":"test"},"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
	code, run := b.call(t, http.MethodPost, "/api/v2/team/hostile/workflow/build/submit", b.token, `{}`)
	require.Equal(t, http.StatusCreated, code, run)
	code, sch := b.call(t, http.MethodPost, "/api/v2/team/hostile/schedule", b.token,
		`{"name":"nightly","workflowRef":"build","cronSchedule":"0 2 * * *","timezone":"Europe/Paris"}`)
	require.Equal(t, http.StatusCreated, code, sch)
	base := map[string]string{
		"team": "hostile", "name": "build", "workflowRunId": run["id"].(string), "scheduleId": sch["id"].(string),
	}

	var reqs []hostileRequest
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		item := doc.Paths.Value(path)
		for _, method := range slices.Sorted(maps.Keys(item.Operations())) {
			reqs = append(reqs, hostileVariants(method, path, item, item.GetOperation(method), base)...)
		}
	}
	// Deletes come last, so that the resources stay for everything else.
	sort.SliceStable(reqs, func(i, j int) bool {
		return reqs[i].method != http.MethodDelete && reqs[j].method == http.MethodDelete
	})

	// Between the writes and the deletes, everything stored is read back: every search and
	// the resources the variants wrote to must answer JSON any parser reads.
	var readBack []hostileRequest
	for _, path := range slices.Sorted(maps.Keys(doc.Paths.Map())) {
		if doc.Paths.Value(path).Get == nil || strings.Contains(strings.ReplaceAll(strings.ReplaceAll(path, "{team}", ""), "{name}", ""), "{") {
			continue
		}
		readBack = append(readBack, hostileRequest{
			op: http.MethodGet + " " + path, variant: "read back", method: http.MethodGet,
			path: strings.NewReplacer("{team}", base["team"], "{name}", base["name"]).Replace(path),
		})
	}

	started := time.Now()
	outcomes := sendHostile(b, reqs, readBack)
	classes := map[string]int{}
	var failures []string
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			classes["error"]++
			failures = append(failures, fmt.Sprintf("%s %s?%.200s [%s]: %v", o.req.method, o.req.path, o.req.query, o.req.variant, o.err))
			continue
		default:
			classes[fmt.Sprintf("%dxx", o.status/100)]++
		}
		if o.status >= 500 {
			failures = append(failures, fmt.Sprintf("%s %.300s?%.200s [%s]: %d %.400s", o.req.method, o.req.path, o.req.query, o.req.variant, o.status, o.body))
			continue
		}
		if o.status < 300 && len(o.body) > 0 && (o.body[0] == '{' || o.body[0] == '[') {
			if depth, err := jsonDepth(o.body); err != nil || depth > maxAnswerDepth {
				failures = append(failures, fmt.Sprintf("%s %.300s?%.200s [%s]: %d answers JSON that common parsers refuse (depth %d): %v", o.req.method, o.req.path, o.req.query, o.req.variant, o.status, depth, err))
			}
		}
		if o.status >= 400 && o.req.method != http.MethodHead {
			if problem := errorShapeProblem(o); problem != "" {
				failures = append(failures, fmt.Sprintf("%s %.300s?%.200s [%s]: %d %s: %.400s", o.req.method, o.req.path, o.req.query, o.req.variant, o.status, problem, o.body))
			}
		}
	}
	t.Logf("hostile input: %d requests over %d operations in %v; outcomes %v",
		len(outcomes), countOps(reqs), time.Since(started).Round(time.Millisecond), classes)
	if len(failures) > 0 {
		sort.Strings(failures)
		t.Errorf("%d hostile requests were not answered with a 2xx-4xx in the contract's shape:\n%s",
			len(failures), strings.Join(failures, "\n"))
	}
}

// maxAnswerDepth is how deeply an answer may nest: Ruby's JSON parser refuses more by
// default, others (Python, browsers) somewhat more.
const maxAnswerDepth = 100

// jsonDepth parses raw and returns how deeply its arrays and objects nest.
func jsonDepth(raw string) (int, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return deepest, nil
		}
		if err != nil {
			return deepest, err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}

func countOps(reqs []hostileRequest) int {
	ops := map[string]bool{}
	for _, r := range reqs {
		ops[r.op] = true
	}
	return len(ops)
}

// errorShapeProblem reports what is wrong with an error answer's body, or "".
func errorShapeProblem(o hostileOutcome) string {
	var body struct {
		Status int    `json:"status"`
		Code   int    `json:"code"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal([]byte(o.body), &body); err != nil {
		return "not the contract's error body"
	}
	if body.Status != o.status || body.Code == 0 || body.Reason == "" {
		return "not the contract's error body"
	}
	return ""
}

// sendHostile sends reqs with a few workers and returns their outcomes in order. The
// deletes among them go last, after readBack.
func sendHostile(b *baton, reqs, readBack []hostileRequest) []hostileOutcome {
	client := &http.Client{Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	split := len(reqs)
	for i, r := range reqs {
		if r.method == http.MethodDelete {
			split = i
			break
		}
	}
	reqs = slices.Concat(reqs[:split], readBack, reqs[split:])
	out := make([]hostileOutcome, len(reqs))
	for _, part := range [][2]int{{0, split}, {split, split + len(readBack)}, {split + len(readBack), len(reqs)}} {
		next := make(chan int)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					out[i] = sendOne(client, b, reqs[i])
				}
			}()
		}
		for i := part[0]; i < part[1]; i++ {
			next <- i
		}
		close(next)
		wg.Wait()
	}
	return out
}

func sendOne(client *http.Client, b *baton, r hostileRequest) hostileOutcome {
	u, err := url.Parse(b.url)
	if err != nil {
		return hostileOutcome{req: r, err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, b.url, strings.NewReader(string(r.body)))
	if err != nil {
		return hostileOutcome{req: r, err: err}
	}
	// Opaque keeps the path exactly as built: escapes, dots and all.
	req.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, Opaque: r.path, RawQuery: r.query}
	if r.body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	maps.Copy(req.Header, r.header)
	req.Header.Set("Authorization", "Bearer "+b.token)
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	var resp *http.Response
	if len(r.path)+len(r.query)+headerSize(r.header) > 8<<10 {
		resp, err = sendRaw(ctx, u.Host, req)
	} else {
		resp, err = client.Do(req)
	}
	if err != nil {
		return hostileOutcome{req: r, err: err}
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" && resp.StatusCode < 300 {
		// A watch: its answer is a stream that lasts as long as what it follows.
		return hostileOutcome{req: r, status: resp.StatusCode}
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return hostileOutcome{req: r, status: resp.StatusCode, err: err}
	}
	return hostileOutcome{req: r, status: resp.StatusCode, body: string(raw)}
}

func headerSize(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// sendRaw sends an oversized request on its own connection, reading the answer while it
// writes: a server refusing the head answers and closes before the body is read, and an
// HTTP client that only reads once it has written would see the reset, not the answer.
func sendRaw(ctx context.Context, addr string, req *http.Request) (*http.Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	req.Close = true
	go func() { _ = req.Write(conn) }()
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		conn.Close()
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	conn.Close()
	resp.Body = io.NopCloser(strings.NewReader(string(raw)))
	return resp, err
}

// Hostile values.
var (
	huge        = strings.Repeat("h", 64<<10)
	overflowing = []string{"9223372036854775807", "-9223372036854775808", "99999999999999999999999", "1e309", "-1e309", "-1", "1.5", "NaN"}
	hostileText = []string{"a\x00b", "$where", "a.b", `{"$gt":""}`, "\xff\xfe", "../../etc", strings.Repeat("q", 8<<10)}
	pathValues  = []string{"a%00b", "%24where", "a.b", "%7B%22%24gt%22%3A%22%22%7D", "%FF%FE", "..%2F..", "9223372036854775807", "-1", strings.Repeat("p", 8<<10)}
	labelValues = []string{"a\x00b=c", "$where=1", "a.b=c", "$gt", "=", "a=b=c", "%ZZ", "k=\x00"}
)

// deepJSON is a JSON array nested depth levels.
func deepJSON(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

// deepObject is a JSON object nested depth levels.
func deepObject(depth int) string {
	return strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
}

// hostileVariants builds the variants of one operation.
func hostileVariants(method, pattern string, item *openapi3.PathItem, op *openapi3.Operation, base map[string]string) []hostileRequest {
	key := method + " " + pattern
	params := append(slices.Clone(item.Parameters), op.Parameters...)
	pathWith := func(name, value string) string {
		out := pattern
		for _, p := range params {
			if p.Value == nil || p.Value.In != "path" {
				continue
			}
			v := base[p.Value.Name]
			if v == "" {
				v = "65a1b2c3d4e5f60718293a4b"
			}
			if p.Value.Name == name {
				v = value
			}
			out = strings.ReplaceAll(out, "{"+p.Value.Name+"}", v)
		}
		return out
	}
	basePath := pathWith("", "")
	var bodyCType string
	var bodySchema *openapi3.Schema
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, ct := range []string{"application/json", "application/x-yaml"} {
			if mt := op.RequestBody.Value.Content.Get(ct); mt != nil {
				bodyCType = ct
				if mt.Schema != nil {
					bodySchema = mt.Schema.Value
				}
				break
			}
		}
	}
	var baseBody []byte
	if valid, ok := validBodies[key]; ok {
		baseBody, bodyCType = []byte(valid), "application/json"
	} else if bodySchema != nil && bodyCType == "application/json" {
		baseBody, _ = json.Marshal(sample(bodySchema, 0))
	} else if method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		baseBody, bodyCType = []byte("{}"), "application/json"
	}
	var out []hostileRequest
	add := func(variant, path, query string, body []byte, ctype string, header http.Header) {
		// Names that must be new are new in every request.
		for bytes.Contains(body, []byte(uniqMarker)) {
			body = bytes.Replace(body, []byte(uniqMarker), []byte(fmt.Sprintf("hx-%d", len(out))), 1)
		}
		out = append(out, hostileRequest{op: key, variant: variant, method: method, path: path, query: query, body: body, ctype: ctype, header: header})
	}

	// Path parameters.
	for _, p := range params {
		if p.Value == nil || p.Value.In != "path" {
			continue
		}
		for _, v := range pathValues {
			add(fmt.Sprintf("path %s=%.40q", p.Value.Name, v), pathWith(p.Value.Name, v), "", baseBody, bodyCType, nil)
		}
	}
	// Query parameters.
	for _, p := range params {
		if p.Value == nil || p.Value.In != "query" {
			continue
		}
		name := p.Value.Name
		values := slices.Clone(hostileText)
		if s := p.Value.Schema; s != nil && s.Value != nil {
			t := s.Value.Type
			if s.Value.Items != nil && s.Value.Items.Value != nil {
				t = s.Value.Items.Value.Type
			}
			switch {
			case t.Is("integer"), t.Is("number"):
				values = append(values, overflowing...)
			case t.Is("boolean"):
				values = append(values, "maybe", "1e309")
			}
		}
		if name == "labels" {
			values = append(values, labelValues...)
		}
		for _, v := range values {
			add(fmt.Sprintf("query %s=%.40q", name, v), basePath, url.QueryEscape(name)+"="+url.QueryEscape(v), baseBody, bodyCType, nil)
		}
		// Raw, unescaped and repeated forms.
		add("query "+name+" raw %ZZ", basePath, name+"=%ZZ%00", baseBody, bodyCType, nil)
		add("query "+name+" repeated", basePath, strings.Repeat(name+"=x&", 500), baseBody, bodyCType, nil)
	}
	// Sizes of the request line and headers.
	add("query 12 KiB", basePath, "x="+strings.Repeat("a", 12<<10), baseBody, bodyCType, nil)
	add("query 40 KiB", basePath, "x="+strings.Repeat("a", 40<<10), baseBody, bodyCType, nil)
	add("header 40 KiB", basePath, "", baseBody, bodyCType, http.Header{"X-Big": {strings.Repeat("b", 40<<10)}})
	many := http.Header{}
	for i := range 400 {
		many.Set(fmt.Sprintf("X-H%d", i), strings.Repeat("m", 100))
	}
	add("400 headers", basePath, "", baseBody, bodyCType, many)

	// Bodies.
	if baseBody == nil {
		return out
	}
	raws := map[string]string{
		"empty": "", "null": "null", "array": "[]", "string": `"s"`, "number 1e309": "1e309",
		"overflow": "9223372036854775807", "truncated": "{", "nul": "{\"a\":\"\x00\"}", "invalid utf-8": "{\"a\":\"\xff\"}",
		"deep array": deepJSON(10000), "deep object": deepObject(10000), "deep 100": deepObject(100),
		"$where": `{"$where":"1"}`, "dotted key": `{"a.b":1}`, "nul key": `{"a\u0000b":1}`, "$ keys": `{"$set":{"name":"x"},"$gt":1}`,
		"duplicate keys": `{"name":"a","name":"b"}`, "huge string": `{"name":"` + strings.Repeat("n", 900<<10) + `"}`,
	}
	for _, name := range slices.Sorted(maps.Keys(raws)) {
		add("body "+name, basePath, "", []byte(raws[name]), "application/json", nil)
	}
	if bodyCType == "application/x-yaml" {
		for name, y := range map[string]string{
			"yaml deep": strings.Repeat("[", 10000) + strings.Repeat("]", 10000), "yaml $ keys": "$where: 1\na.b: 2\n",
			"yaml anchors": "a: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
			"yaml tab":     "\tname: x", "yaml nul": "name: \"a\\0b\"",
		} {
			add("body "+name, basePath, "", []byte(y), "application/x-yaml", nil)
		}
	}
	if bodySchema == nil || bodyCType != "application/json" {
		return out
	}
	var baseObj map[string]any
	if json.Unmarshal(baseBody, &baseObj) != nil {
		return out
	}
	props := properties(bodySchema)
	for _, prop := range slices.Sorted(maps.Keys(props)) {
		var ps *openapi3.Schema
		if props[prop] != nil {
			ps = props[prop].Value
		}
		for _, v := range hostileValues(ps) {
			obj := maps.Clone(baseObj)
			obj[prop] = v.value
			body, err := json.Marshal(obj)
			if err != nil {
				continue
			}
			if v.raw != "" {
				body = bytes.Replace(body, []byte(`"`+rawMarker+`"`), []byte(v.raw), 1)
			}
			add("body ."+prop+" "+v.name, basePath, "", body, "application/json", nil)
		}
	}
	return out
}

// rawMarker stands in a marshalled body for a value JSON cannot marshal (1e309); it is
// replaced by the raw text. uniqMarker is replaced by a name no other request uses.
const (
	rawMarker  = "@raw@"
	uniqMarker = "@uniq@"
)

const hostileWorkflow = `"labels":{"a":"b"},"annotations":{"x":{"y":1}},"description":"d",
	"params":[{"name":"p","type":"text","default":"d"}],
	"tasks":[{"name":"start","type":"start"},{"name":"end","type":"end","dependencies":[{"taskRef":"start"}]}]}`

const hostileTask = `"type":"template","labels":{"a":"b"},
	"spec":{"image":"alpine:3","script":"true","params":[{"name":"w","type":"text","default":"x"}]}}`

// validBodies are bodies the services accept, for the operations whose sample from the
// schema would be refused before the hostile value in it reaches a store.
var validBodies = map[string]string{
	"POST /api/v2/team":                               `{"name":"@uniq@","displayName":"X","labels":{"a":"b"},"parameters":[{"name":"p","type":"text","value":"v"}]}`,
	"PATCH /api/v2/team/{team}":                       `{"displayName":"X","labels":{"a":"b"}}`,
	"POST /api/v2/team/{team}/workflow":               `{"name":"@uniq@",` + hostileWorkflow,
	"PUT /api/v2/team/{team}/workflow/{name}":         `{"name":"build",` + hostileWorkflow,
	"POST /api/v2/workflowtemplate":                   `{"name":"@uniq@",` + hostileWorkflow,
	"POST /api/v2/team/{team}/task":                   `{"name":"@uniq@",` + hostileTask,
	"PUT /api/v2/team/{team}/task/{name}":             `{"name":"build",` + hostileTask,
	"POST /api/v2/task":                               `{"name":"@uniq@",` + hostileTask,
	"POST /api/v2/team/{team}/workflow/{name}/submit": `{"labels":{"a":"b"},"annotations":{"x":"y"},"params":{"p":"v"}}`,
	"PATCH /api/v2/profile":                           `{"displayName":"X","labels":{"a":"b"}}`,
	"PATCH /api/v2/user/profile":                      `{"displayName":"X","labels":{"a":"b"}}`,
	"POST /api/v2/token":                              `{"type":"team","name":"@uniq@","principal":"hostile","permissions":["**/read"]}`,
	"POST /api/v2/parameters":                         `{"name":"@uniq@","type":"text","value":"v"}`,
	"POST /api/v2/global-params":                      `{"name":"@uniq@","type":"text","value":"v"}`,
}

type hostileValue struct {
	name  string
	value any
	raw   string
}

// hostileValues are the values tried for a body field of schema s: a wrong type, and the
// hostile values of its own type (all of them when the schema leaves the type open).
func hostileValues(s *openapi3.Schema) []hostileValue {
	// Just under what encoding/json reads (10,000 levels): stored as is, it would come back
	// inside an answer's own nesting that no parser reads.
	deep := hostileValue{name: "deep", raw: deepJSON(9990), value: rawMarker}
	numbers := []hostileValue{
		{name: "max int64", raw: "9223372036854775807", value: rawMarker},
		{name: "1e309", raw: "1e309", value: rawMarker},
		{name: "-1", value: -1},
	}
	strs := []hostileValue{{name: "nul", value: "a\x00b"}, {name: "huge", value: huge}}
	objects := []hostileValue{
		{name: "$ keys", value: map[string]any{"$where": "1", "a.b": "1", "$gt": map[string]any{"$ne": 1}}},
		{name: "nul key", value: map[string]any{"a\x00b": "1"}},
		deep,
	}
	arrays := []hostileValue{
		{name: "$ keys in list", value: []any{map[string]any{"$where": 1, "name": "a.b", "key": "$x", "value": map[string]any{"a.b": 1, "$in": []any{1}}}}},
		{name: "nul key in list", value: []any{map[string]any{"a\x00b": "1", "name": "a\x00b"}}},
		{name: "deep in list", raw: "[" + deepObject(9990) + "]", value: rawMarker},
	}
	str := hostileValue{name: "string", value: "x"}
	obj := hostileValue{name: "object", value: map[string]any{"x": 1}}
	var t *openapi3.Types
	if s != nil {
		t = s.Type
	}
	switch {
	case t.Is("integer"), t.Is("number"):
		return append(numbers, str)
	case t.Is("string"):
		return append(strs, obj, hostileValue{name: "number", value: 1})
	case t.Is("boolean"):
		return []hostileValue{str, {name: "1e309", raw: "1e309", value: rawMarker}}
	case t.Is("object"):
		return append(objects, str)
	case t.Is("array"):
		return append(arrays, str, obj)
	}
	all := slices.Concat(numbers, strs, objects, arrays)
	return append(all, str, obj, hostileValue{name: "bool", value: true})
}

// properties collects the properties of a schema and of its allOf parts.
func properties(s *openapi3.Schema) openapi3.Schemas {
	out := openapi3.Schemas{}
	maps.Copy(out, s.Properties)
	for _, part := range s.AllOf {
		if part.Value != nil {
			maps.Copy(out, properties(part.Value))
		}
	}
	return out
}

// sample is a plausible value of s: what a careful client would send, for hostile values
// to replace one field at a time.
func sample(s *openapi3.Schema, depth int) any {
	if s == nil || depth > 4 {
		return nil
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	if s.Example != nil {
		return s.Example
	}
	if props := properties(s); len(props) > 0 {
		obj := map[string]any{}
		for name, p := range props {
			if p.Value == nil || p.Value.ReadOnly {
				continue
			}
			if v := sample(p.Value, depth+1); v != nil {
				obj[name] = v
			}
		}
		return obj
	}
	for _, alt := range append(s.OneOf, s.AnyOf...) {
		if alt.Value != nil {
			return sample(alt.Value, depth)
		}
	}
	switch {
	case s.Type.Is("string"):
		switch s.Format {
		case "date-time":
			return "2026-01-02T03:04:05.000Z"
		case "email":
			return "someone@example.com"
		}
		return "sample"
	case s.Type.Is("integer"), s.Type.Is("number"):
		if s.Min != nil {
			return *s.Min
		}
		return 1
	case s.Type.Is("boolean"):
		return false
	case s.Type.Is("array"):
		if s.Items != nil && s.Items.Value != nil {
			if v := sample(s.Items.Value, depth+1); v != nil {
				return []any{v}
			}
		}
		return []any{}
	case s.Type.Is("object"):
		return map[string]any{}
	}
	return nil
}
