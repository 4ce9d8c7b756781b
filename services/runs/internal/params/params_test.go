package params_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-flow/baton/libs/paramref"
	"github.com/baton-flow/baton/services/runs/internal/params"
)

// scope returns a fresh scope on every call, so that a test changing one cannot disturb
// another.
func scope() params.Scope {
	return params.Scope{
		Global: map[string]any{"region": "eu", "shared": "global", "only-global": 1.0},
		Team:   map[string]any{"shared": "team", "owner": "ops"},
		Run: map[string]any{
			"shared":        "run",
			"branch":        "main",
			"workflow-name": "from-run",
			"count":         42.0,
			"ratio":         0.5,
			"huge":          1e21,
			"num":           json.Number("7"),
			"empty":         nil,
			"html":          "<a&b>",
			"inject":        "$(params.secret)",
			"shell":         "$(date)",
			"secret":        "s3cr3t",
			"list":          []any{"zero", "one", map[string]any{"name": "two"}},
			"data": map[string]any{
				"repo": map[string]any{"name": "baton", "stars": 42.0},
				"a.b":  "dotted",
				"x)y":  "paren",
				"0":    "key zero",
				"list": []any{"p", "q"},
				"nil":  nil,
				"flag": true,
				"json": `{"k":[1,2,{"deep":"v"}],"html":"<b>"}`,
				"tags": []string{"s0", "s1"},
				"env":  map[string]string{"HOME": "/root"},
			},
		},
		Task: map[string]any{"shared": "task", "tonly": "t"},
		Context: map[string]string{
			"workflow-name":  "deploy",
			"callback-url":   "https://baton.example/callback?ref=r1",
			"callback-token": "tok",
		},
		Results: map[string]map[string]string{
			"build": {
				"image": "reg/app:1",
				"meta":  `{"tags":["a","b"],"size":3,"ok":true}`,
				"list":  ` [10, 20] `,
				"plain": "text",
				"bad":   `{"not json`,
			},
		},
	}
}

func TestString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    string
		want    string
		wantErr string
	}{
		{name: "no reference", give: "echo hello", want: "echo hello"},
		{name: "empty", give: "", want: ""},
		{name: "dollar alone", give: "cost $5 (approx) $", want: "cost $5 (approx) $"},
		{name: "open at end", give: "echo $(", want: "echo $("},

		// Each prefix.
		{name: "params", give: "git checkout $(params.branch)", want: "git checkout main"},
		{name: "global params", give: "$(global.params.shared)", want: "global"},
		{name: "team params", give: "$(team.params.shared)", want: "team"},
		{name: "workflow params read the run layer", give: "$(workflow.params.shared)", want: "run"},
		{name: "context params", give: "$(context.params.workflow-name)", want: "deploy"},
		{name: "context token", give: "-H 'x-token: $(context.params.callback-token)'", want: "-H 'x-token: tok'"},
		{name: "wfe-url is callback-url", give: "$(context.params.wfe-url)", want: "https://baton.example/callback?ref=r1"},
		{name: "wfe-url through params", give: "$(params.wfe-url)", want: "https://baton.example/callback?ref=r1"},
		{name: "task result", give: "docker push $(tasks.build.results.image)", want: "docker push reg/app:1"},

		// Layers: global → team → run → task → context, the later winning.
		{name: "task beats run, team, global", give: "$(params.shared)", want: "task"},
		{name: "context beats run", give: "$(params.workflow-name)", want: "deploy"},
		{name: "only in global", give: "$(params.region)", want: "eu"},
		{name: "only in team", give: "$(params.owner)", want: "ops"},
		{name: "only in task", give: "$(params.tonly)", want: "t"},

		// Paths.
		{name: "dot path", give: "$(params.data.repo.name)", want: "baton"},
		{name: "double-quoted key", give: `$(params.data["a.b"])`, want: "dotted"},
		{name: "single-quoted key", give: `$(params.data['a.b'])`, want: "dotted"},
		{name: "quoted key with paren", give: `$(params.data["x)y"]) done`, want: "paren done"},
		{name: "quoted digits are a key", give: `$(params.data["0"])`, want: "key zero"},
		{name: "index", give: "$(params.list[0])", want: "zero"},
		{name: "dotted index", give: "$(params.list.1)", want: "one"},
		{name: "index then key", give: "$(params.list[2].name)", want: "two"},
		{name: "nested list", give: "$(params.data.list[1])", want: "q"},
		{name: "mixed path", give: `$(params.data["repo"].name)`, want: "baton"},
		{name: "string slice", give: "$(params.data.tags[1])", want: "s1"},
		{name: "string map", give: "$(params.data.env.HOME)", want: "/root"},
		{name: "path on a global", give: "$(global.params.only-global)", want: "1"},

		// JSON text is parsed when a path goes into it.
		{name: "into JSON text param", give: "$(params.data.json.k[2].deep)", want: "v"},
		{name: "JSON text number as written", give: "$(params.data.json.k[0])", want: "1"},
		{name: "into JSON text result", give: "$(tasks.build.results.meta.tags[1])", want: "b"},
		{name: "result key in brackets", give: `$(tasks.build.results.meta["size"])`, want: "3"},
		{name: "JSON array result with spaces", give: "$(tasks.build.results.list[1])", want: "20"},
		{name: "JSON text object interpolates unescaped", give: "$(params.data.json.html)", want: "<b>"},
		{name: "result JSON text stays as written", give: "$(tasks.build.results.meta)", want: `{"tags":["a","b"],"size":3,"ok":true}`},

		// Interpolation of values that are not strings.
		{name: "integer float", give: "n=$(params.count)", want: "n=42"},
		{name: "fraction", give: "$(params.ratio)", want: "0.5"},
		{name: "json number", give: "$(params.num)", want: "7"},
		{name: "bool", give: "$(params.data.flag)", want: "true"},
		{name: "null is empty", give: "[$(params.empty)]", want: "[]"},
		{name: "nested null is empty", give: "[$(params.data.nil)]", want: "[]"},
		{name: "object as compact JSON", give: "$(params.data.repo)", want: `{"name":"baton","stars":42}`},
		{name: "array as compact JSON", give: "$(params.list)", want: `["zero","one",{"name":"two"}]`},
		{name: "no HTML escaping", give: "$(params.html)", want: "<a&b>"},
		{name: "large number", give: "$(params.huge)", want: "1e+21"},

		// What is not a reference stays.
		{name: "shell substitutions untouched", give: "$(date) $(pwd) $(echo hi)", want: "$(date) $(pwd) $(echo hi)"},
		{name: "nested resolves the inner only", give: "echo $(echo $(params.branch))", want: "echo $(echo main)"},
		{name: "prefix must start the reference", give: "$( params.branch) $(xparams.branch)", want: "$( params.branch) $(xparams.branch)"},
		{name: "results path untouched", give: "echo ok > $(results.out.path)", want: "echo ok > $(results.out.path)"},
		{name: "results path beside a reference", give: "echo $(params.branch) > $(results.out_1.path)", want: "echo main > $(results.out_1.path)"},
		{name: "escaped dollar is not special", give: "$$(params.branch)", want: "$main"},

		// Single pass.
		{name: "no double substitution", give: "$(params.inject)", want: "$(params.secret)"},
		{name: "shell text from a value stays", give: "$(params.shell)", want: "$(date)"},
		{name: "adjacent references", give: "$(params.branch)$(params.branch)-$(params.owner)", want: "mainmain-ops"},
		{name: "unicode around", give: "héllo $(params.branch) wörld ✓", want: "héllo main wörld ✓"},
		{name: "multi-line script", give: "#!/bin/sh\nset -e\necho \"$(params.branch)\"\necho '$(team.params.owner)'\n", want: "#!/bin/sh\nset -e\necho \"main\"\necho 'ops'\n"},

		// Cannot be resolved.
		{name: "missing param", give: "echo $(params.missing)", wantErr: `reference '$(params.missing)' cannot be resolved: no parameter "missing"`},
		{name: "missing global", give: "$(global.params.branch)", wantErr: `reference '$(global.params.branch)' cannot be resolved: no global parameter "branch"`},
		{name: "missing team", give: "$(team.params.region)", wantErr: `reference '$(team.params.region)' cannot be resolved: no team parameter "region"`},
		{name: "missing workflow", give: "$(workflow.params.region)", wantErr: `reference '$(workflow.params.region)' cannot be resolved: no workflow parameter "region"`},
		{name: "missing key", give: "$(params.data.nope)", wantErr: `reference '$(params.data.nope)' cannot be resolved: data has no key "nope"`},
		{name: "missing deep key", give: "$(params.data.repo.owner)", wantErr: `reference '$(params.data.repo.owner)' cannot be resolved: data.repo has no key "owner"`},
		{name: "index out of range", give: "$(params.list[5])", wantErr: `reference '$(params.list[5])' cannot be resolved: list has no index 5 (length 3)`},
		{name: "huge index", give: "$(params.list[99999999999999999999])", wantErr: `reference '$(params.list[99999999999999999999])' cannot be resolved: list has no index 99999999999999999999 (length 3)`},
		{name: "key on an array", give: "$(params.list.name)", wantErr: `reference '$(params.list.name)' cannot be resolved: list is an array: "name" is not an index`},
		{name: "quoted index on an array", give: `$(params.list["0"])`, wantErr: `reference '$(params.list["0"])' cannot be resolved: list is an array: "0" is not an index`},
		{name: "into a string", give: "$(params.branch.x)", wantErr: `reference '$(params.branch.x)' cannot be resolved: branch is a string, not an object or array`},
		{name: "into a number", give: "$(params.count[0])", wantErr: `reference '$(params.count[0])' cannot be resolved: count is a number, not an object or array`},
		{name: "into null", give: "$(params.data.nil.x)", wantErr: `reference '$(params.data.nil.x)' cannot be resolved: data.nil is null, not an object or array`},
		{name: "into a bool", give: "$(params.data.flag.x)", wantErr: `reference '$(params.data.flag.x)' cannot be resolved: data.flag is a boolean, not an object or array`},
		{name: "into bad JSON text", give: "$(tasks.build.results.bad.x)", wantErr: `reference '$(tasks.build.results.bad.x)' cannot be resolved: bad is a string, not an object or array`},
		{name: "unknown task", give: "$(tasks.test.results.image)", wantErr: `reference '$(tasks.test.results.image)' cannot be resolved: no results from task "test"`},
		{name: "unknown result", give: "$(tasks.build.results.digest)", wantErr: `reference '$(tasks.build.results.digest)' cannot be resolved: task "build" has no result "digest"`},
		{name: "missing key in result", give: "$(tasks.build.results.meta.nope)", wantErr: `reference '$(tasks.build.results.meta.nope)' cannot be resolved: meta has no key "nope"`},
		{name: "context not set", give: "$(context.params.webhook-url)", wantErr: `reference '$(context.params.webhook-url)' cannot be resolved: context parameter "webhook-url" is not set`},
		{name: "first error after a good reference", give: "$(params.branch) $(params.a) $(params.b)", wantErr: `reference '$(params.a)' cannot be resolved: no parameter "a"`},
		{name: "inside a shell substitution", give: "$(echo $(params.missing))", wantErr: `reference '$(params.missing)' cannot be resolved: no parameter "missing"`},

		// Malformed.
		{name: "unclosed", give: "echo $(params.branch", wantErr: `reference '$(params.branch' is malformed: no closing ')'`},
		{name: "unclosed quote", give: `$(params.data["a.b)`, wantErr: `reference '$(params.data["a.b)' is malformed: no closing ')'`},
		{name: "unclosed is clipped", give: "$(params.x " + strings.Repeat("y", 200), wantErr: `reference '$(params.x ` + strings.Repeat("y", 69) + `…' is malformed: no closing ')'`},
		{name: "empty name", give: "$(params.)", wantErr: `reference '$(params.)' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "space", give: "$(params.a b)", wantErr: `reference '$(params.a b)' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "empty segment", give: "$(params.a..b)", wantErr: `reference '$(params.a..b)' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "trailing dot", give: "$(team.params.a.)", wantErr: `reference '$(team.params.a.)' is malformed: want $(team.params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "bare bracket word", give: "$(params.a[x])", wantErr: `reference '$(params.a[x])' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "negative index", give: "$(params.a[-1])", wantErr: `reference '$(params.a[-1])' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "empty brackets", give: "$(params.a[])", wantErr: `reference '$(params.a[])' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "bracket first", give: `$(params.["a"])`, wantErr: `reference '$(params.["a"])' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "quote not followed by bracket", give: `$(params.a["b"x)`, wantErr: `reference '$(params.a["b"x)' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "shell pipeline after prefix", give: "$(tasks.build.results.image | tr a b)", wantErr: `reference '$(tasks.build.results.image | tr a b)' is malformed: want $(tasks.<task>.results.<result>), optionally followed by .key, ["key"] or [index]`},
		{name: "task without results", give: "$(tasks.build.image)", wantErr: `reference '$(tasks.build.image)' is malformed: want $(tasks.<task>.results.<result>)`},
		{name: "task without name", give: "$(tasks..results.x)", wantErr: `reference '$(tasks..results.x)' is malformed: want $(tasks.<task>.results.<result>)`},
		{name: "result not a path", give: "$(results.out)", wantErr: `reference '$(results.out)' is malformed: want $(results.<name>.path)`},
		{name: "result path with more", give: "$(results.out.path.x)", wantErr: `reference '$(results.out.path.x)' is malformed: want $(results.<name>.path)`},
		{name: "result without name", give: "$(results..path)", wantErr: `reference '$(results..path)' is malformed: want $(results.<name>.path)`},
		{name: "unknown context name", give: "$(context.params.nope)", wantErr: `reference '$(context.params.nope)' is malformed: want one of ` + strings.Join(paramref.ContextNames, ", ")},
		{name: "context with a path", give: "$(context.params.workflow-name.x)", wantErr: `reference '$(context.params.workflow-name.x)' is malformed: want one of ` + strings.Join(paramref.ContextNames, ", ")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := scope().String(tt.give)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("String(%q) = %q, want error %q", tt.give, got, tt.wantErr)
				}
				if err.Error() != tt.wantErr {
					t.Fatalf("String(%q) error\n got %s\nwant %s", tt.give, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("String(%q): %v", tt.give, err)
			}
			if got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestStringErrorTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		give          string
		wantMalformed bool
	}{
		{name: "unresolved", give: "$(params.missing)"},
		{name: "unresolved path", give: "$(params.list[9])"},
		{name: "malformed", give: "$(params.a b)", wantMalformed: true},
		{name: "unclosed", give: "$(params.a", wantMalformed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := scope().String(tt.give)
			var unresolved *params.UnresolvedError
			var malformed *params.MalformedError
			if got := errors.As(err, &malformed); got != tt.wantMalformed {
				t.Errorf("errors.As(%v, *MalformedError) = %v, want %v", err, got, tt.wantMalformed)
			}
			if got := errors.As(err, &unresolved); got == tt.wantMalformed {
				t.Errorf("errors.As(%v, *UnresolvedError) = %v, want %v", err, got, !tt.wantMalformed)
			}
		})
	}
}

func TestStringLayers(t *testing.T) {
	t.Parallel()
	layer := func(v string) map[string]any { return map[string]any{"x": v} }
	tests := []struct {
		name string
		give params.Scope
		want string
	}{
		{name: "global", give: params.Scope{Global: layer("g")}, want: "g"},
		{name: "team over global", give: params.Scope{Global: layer("g"), Team: layer("t")}, want: "t"},
		{name: "run over team", give: params.Scope{Global: layer("g"), Team: layer("t"), Run: layer("r")}, want: "r"},
		{name: "task over run", give: params.Scope{Global: layer("g"), Team: layer("t"), Run: layer("r"), Task: layer("k")}, want: "k"},
		{name: "context over task", give: params.Scope{Task: layer("k"), Context: map[string]string{"x": "c"}}, want: "c"},
		{name: "run over global, no team", give: params.Scope{Global: layer("g"), Run: layer("r")}, want: "r"},
		{name: "a null value still wins", give: params.Scope{Global: layer("g"), Run: map[string]any{"x": nil}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.give.String("$(params.x)")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestContextAlias(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give map[string]string
		ref  string
		want string
	}{
		{name: "wfe-url from callback-url", give: map[string]string{"callback-url": "c"}, ref: "wfe-url", want: "c"},
		{name: "callback-url from wfe-url", give: map[string]string{"wfe-url": "w"}, ref: "callback-url", want: "w"},
		{name: "each its own when both set", give: map[string]string{"callback-url": "c", "wfe-url": "w"}, ref: "wfe-url", want: "w"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := params.Scope{Context: tt.give}.String("$(context.params." + tt.ref + ")")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    any
		want    any
		wantErr string
	}{
		{name: "exact object keeps its type", give: "$(params.data.repo)", want: map[string]any{"name": "baton", "stars": 42.0}},
		{name: "exact array", give: "$(params.list)", want: []any{"zero", "one", map[string]any{"name": "two"}}},
		{name: "exact number", give: "$(params.count)", want: 42.0},
		{name: "exact json number", give: "$(params.num)", want: json.Number("7")},
		{name: "exact bool", give: "$(params.data.flag)", want: true},
		{name: "exact null", give: "$(params.empty)", want: nil},
		{name: "exact string", give: "$(params.branch)", want: "main"},
		{name: "exact context", give: "$(context.params.workflow-name)", want: "deploy"},
		{name: "exact result stays text", give: "$(tasks.build.results.meta)", want: `{"tags":["a","b"],"size":3,"ok":true}`},
		{name: "exact path into JSON text", give: "$(tasks.build.results.meta.tags)", want: []any{"a", "b"}},
		{name: "exact number from JSON text", give: "$(tasks.build.results.meta.size)", want: json.Number("3")},
		{name: "exact string slice", give: "$(params.data.tags)", want: []string{"s0", "s1"}},
		{name: "exact results path stays", give: "$(results.out.path)", want: "$(results.out.path)"},
		{name: "exact shell stays", give: "$(date)", want: "$(date)"},
		{name: "exact injection stays text", give: "$(params.inject)", want: "$(params.secret)"},
		{name: "surrounding space interpolates", give: " $(params.count)", want: " 42"},
		{name: "two references interpolate", give: "$(params.count)$(params.count)", want: "4242"},
		{name: "embedded object as JSON", give: "data=$(params.data.repo)", want: `data={"name":"baton","stars":42}`},
		{name: "non-strings unchanged", give: []any{1.5, true, nil, json.Number("2")}, want: []any{1.5, true, nil, json.Number("2")}},
		{
			name: "recursive",
			give: map[string]any{
				"image":            "$(tasks.build.results.image)",
				"args":             []any{"--branch=$(params.branch)", "$(params.count)", "$(params.data.flag)"},
				"env":              map[string]any{"REPO": "$(params.data.repo)", "N": 3.0, "Z": nil},
				"$(params.branch)": "keys are not resolved",
			},
			want: map[string]any{
				"image":            "reg/app:1",
				"args":             []any{"--branch=main", 42.0, true},
				"env":              map[string]any{"REPO": map[string]any{"name": "baton", "stars": 42.0}, "N": 3.0, "Z": nil},
				"$(params.branch)": "keys are not resolved",
			},
		},
		{name: "string map keeps type", give: map[string]string{"A": "$(params.count)", "B": "b"}, want: map[string]string{"A": "42", "B": "b"}},
		{name: "string slice keeps type", give: []string{"$(params.data.flag)", "x"}, want: []string{"true", "x"}},
		{name: "exact unresolved", give: "$(params.missing)", wantErr: `reference '$(params.missing)' cannot be resolved: no parameter "missing"`},
		{name: "nested unresolved", give: map[string]any{"a": []any{"ok", "$(params.data.nope)"}}, wantErr: `reference '$(params.data.nope)' cannot be resolved: data has no key "nope"`},
		{name: "first key in order", give: map[string]any{"b": "$(params.b)", "a": "$(params.a)"}, wantErr: `reference '$(params.a)' cannot be resolved: no parameter "a"`},
		{name: "exact malformed", give: "$(params.a b)", wantErr: `reference '$(params.a b)' is malformed: want $(params.<name>), optionally followed by .key, ["key"] or [index]`},
		{name: "exact unclosed", give: "$(params.a", wantErr: `reference '$(params.a' is malformed: no closing ')'`},
		{name: "string map error", give: map[string]string{"A": "$(params.missing)"}, wantErr: `reference '$(params.missing)' cannot be resolved: no parameter "missing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := scope().Value(tt.give)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Value(%v) = %v, %v; want error %q", tt.give, got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Value(%v): %v", tt.give, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Value(%v)\n got %#v\nwant %#v", tt.give, got, tt.want)
			}
		})
	}
}

// Value leaves its input alone, and what it returns shares no container with the scope.
func TestValueCopies(t *testing.T) {
	t.Parallel()
	sc := scope()
	give := map[string]any{"repo": "$(params.data.repo)", "list": []any{"$(params.branch)"}}
	got, err := sc.Value(give)
	if err != nil {
		t.Fatal(err)
	}
	if give["repo"] != "$(params.data.repo)" || give["list"].([]any)[0] != "$(params.branch)" {
		t.Errorf("input changed: %v", give)
	}
	got.(map[string]any)["repo"].(map[string]any)["name"] = "changed"
	if name := sc.Run["data"].(map[string]any)["repo"].(map[string]any)["name"]; name != "baton" {
		t.Errorf("scope changed through the result: name = %v", name)
	}
}

func TestWithTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]any
		spec    string
		want    string
		wantErr string
	}{
		{
			name: "task params resolve against the other layers",
			give: map[string]any{"branch": "release-$(params.branch)", "image": "$(tasks.build.results.image)", "n": "$(params.count)"},
			spec: "$(params.branch) $(params.image) $(params.n) $(params.owner)",
			want: "release-main reg/app:1 42 ops",
		},
		{
			name: "the old task layer is replaced",
			give: map[string]any{"other": "x"},
			spec: "$(params.shared)",
			want: "run",
		},
		{
			name:    "task params do not see each other",
			give:    map[string]any{"a": "1", "b": "$(params.a)"},
			wantErr: `parameter b: reference '$(params.a)' cannot be resolved: no parameter "a"`,
		},
		{
			name:    "nor the task layer given before",
			give:    map[string]any{"b": "$(params.tonly)"},
			wantErr: `parameter b: reference '$(params.tonly)' cannot be resolved: no parameter "tonly"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := scope().WithTask(tt.give)
			if tt.wantErr != "" {
				var unresolved *params.UnresolvedError
				if err == nil || err.Error() != tt.wantErr || !errors.As(err, &unresolved) {
					t.Fatalf("WithTask error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := sc.String(tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRefs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give string
		want []params.Ref
	}{
		{name: "none", give: "echo $(date)", want: nil},
		{name: "params", give: "$(params.branch)", want: []params.Ref{{Text: "$(params.branch)", Prefix: paramref.Params, Name: "branch"}}},
		{name: "paths", give: `$(params.data["a.b"]) $(params.list[0].name)`, want: []params.Ref{
			{Text: `$(params.data["a.b"])`, Prefix: paramref.Params, Name: "data", Path: `["a.b"]`},
			{Text: "$(params.list[0].name)", Prefix: paramref.Params, Name: "list", Path: "[0].name"},
		}},
		{name: "layers", give: "$(global.params.g)$(team.params.t)$(workflow.params.w)", want: []params.Ref{
			{Text: "$(global.params.g)", Prefix: paramref.GlobalParams, Name: "g"},
			{Text: "$(team.params.t)", Prefix: paramref.TeamParams, Name: "t"},
			{Text: "$(workflow.params.w)", Prefix: paramref.WorkflowParams, Name: "w"},
		}},
		{name: "context", give: "$(context.params.wfe-url)", want: []params.Ref{{Text: "$(context.params.wfe-url)", Prefix: paramref.ContextParams, Name: "wfe-url"}}},
		{name: "task results", give: "$(tasks.build.results.meta.tags[0]) $(tasks.test.results.ok)", want: []params.Ref{
			{Text: "$(tasks.build.results.meta.tags[0])", Prefix: paramref.Tasks, Task: "build", Name: "meta", Path: ".tags[0]"},
			{Text: "$(tasks.test.results.ok)", Prefix: paramref.Tasks, Task: "test", Name: "ok"},
		}},
		{name: "results path", give: "> $(results.out.path)", want: []params.Ref{{Text: "$(results.out.path)", Prefix: paramref.Results, Name: "out", Path: ".path"}}},
		{name: "inside shell", give: "$(echo $(params.x))", want: []params.Ref{{Text: "$(params.x)", Prefix: paramref.Params, Name: "x"}}},
		{name: "malformed skipped", give: "$(params.a b) $(params.ok) $(params.open", want: []params.Ref{{Text: "$(params.ok)", Prefix: paramref.Params, Name: "ok"}}},
		{name: "inside a malformed one", give: "$(tasks.x | $(params.y))", want: []params.Ref{{Text: "$(params.y)", Prefix: paramref.Params, Name: "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := params.Refs(tt.give); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Refs(%q)\n got %#v\nwant %#v", tt.give, got, tt.want)
			}
		})
	}
}

func TestValueRefs(t *testing.T) {
	t.Parallel()
	give := map[string]any{
		"b":    []any{"$(tasks.build.results.image)", 1.0, nil},
		"a":    "$(params.x) $(date)",
		"env":  map[string]string{"K": "$(team.params.k)"},
		"args": []string{"$(context.params.taskrun-ref)"},
	}
	var got []string
	for _, r := range params.ValueRefs(give) {
		got = append(got, r.Text)
	}
	want := []string{"$(params.x)", "$(context.params.taskrun-ref)", "$(tasks.build.results.image)", "$(team.params.k)"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ValueRefs\n got %q\nwant %q", got, want)
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give any
		want int
	}{
		{name: "string counts quotes", give: "abc", want: 5},
		{name: "null", give: nil, want: 4},
		{name: "integer", give: 42.0, want: 2},
		{name: "no HTML escaping", give: map[string]any{"a": "<&>"}, want: len(`{"a":"<&>"}`)},
		{name: "compact", give: map[string]any{"a": []any{1.0, "x"}, "b": true}, want: len(`{"a":[1,"x"],"b":true}`)},
		{name: "cannot encode", give: math.NaN(), want: math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := params.Size(tt.give); got != tt.want {
				t.Errorf("Size(%v) = %d, want %d", tt.give, got, tt.want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	t.Parallel()
	if params.MaxResultBytes != 64*1024 || params.MaxRunValuesBytes != 1024*1024 {
		t.Errorf("limits = %d, %d; API.md §8 says 64 KiB and 1 MiB", params.MaxResultBytes, params.MaxRunValuesBytes)
	}
}

// FuzzString checks that no input panics, that a string without `$(` is returned as is and
// that Refs agrees with String about references being there.
func FuzzString(f *testing.F) {
	for _, s := range []string{
		"", "$(", "$(params.", "$(params.data[\"a", "$(params.list[0].name)", "$(echo $(params.branch))",
		"$(tasks.build.results.meta.tags[1])", "$(results.x.path)", "$(params.data['x)y'])", "$(context.params.wfe-url)",
	} {
		f.Add(s)
	}
	sc := scope()
	f.Fuzz(func(t *testing.T, s string) {
		got, err := sc.String(s)
		if !strings.Contains(s, "$(") && (err != nil || got != s) {
			t.Fatalf("String(%q) = %q, %v; want it unchanged", s, got, err)
		}
		if _, verr := sc.Value(s); (verr == nil) != (err == nil) {
			t.Fatalf("String(%q) error %v but Value error %v", s, err, verr)
		}
		_ = params.Refs(s)
	})
}

func BenchmarkString(b *testing.B) {
	refs := []string{
		"$(params.branch)", "$(params.data.repo.name)", `$(params.data["a.b"])`, "$(params.list[2].name)",
		"$(global.params.region)", "$(team.params.owner)", "$(workflow.params.shared)", "$(context.params.workflow-name)",
		"$(context.params.wfe-url)", "$(tasks.build.results.image)", "$(tasks.build.results.meta.tags[1])", "$(params.count)",
		"$(params.data.flag)", "$(params.shared)", "$(params.data.json.k[2].deep)", "$(params.ratio)",
		"$(params.data.list[0])", "$(params.num)", "$(params.tonly)", "$(context.params.callback-token)",
	}
	var script strings.Builder
	script.WriteString("#!/bin/sh\nset -eu\n")
	for i, r := range refs {
		script.WriteString("echo \"step ")
		script.WriteString(strings.Repeat("x", i))
		script.WriteString(": ")
		script.WriteString(r)
		script.WriteString("\" $(date +%s) >> \"$(results.log.path)\"\n")
	}
	s := script.String()
	sc := scope()
	if _, err := sc.String(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sc.String(s); err != nil {
			b.Fatal(err)
		}
	}
}

// A value is secret by where it came from: any reference to a value marked secret, in any
// layer and by any prefix, makes the whole string or value it lands in secret.
func TestSecretProvenance(t *testing.T) {
	t.Parallel()
	sc := scope()
	sc.Secret = params.Secret{
		Global:  map[string]bool{"region": true},
		Team:    map[string]bool{"owner": true},
		Run:     map[string]bool{"secret": true},
		Task:    map[string]bool{"tonly": true},
		Results: map[string]map[string]bool{"build": {"meta": true}},
	}
	tests := []struct {
		name   string
		give   any
		secret bool
	}{
		{name: "global", give: "x $(global.params.region) y", secret: true},
		{name: "team", give: "$(team.params.owner)", secret: true},
		{name: "workflow", give: "$(workflow.params.secret)", secret: true},
		{name: "params finds the run layer", give: "$(params.secret)", secret: true},
		{name: "params finds the task layer", give: "$(params.tonly)", secret: true},
		{name: "params finds the global layer", give: "$(params.region)", secret: true},
		{name: "a task layer value hides a secret of the same name", give: "$(params.shared)", secret: false},
		{name: "a path into a secret result", give: "$(tasks.build.results.meta.size)", secret: true},
		{name: "another result", give: "$(tasks.build.results.image)", secret: false},
		{name: "nested in an object", give: map[string]any{"a": []any{"$(team.params.owner)"}}, secret: true},
		{name: "in a string list", give: []string{"a", "b $(params.secret)"}, secret: true},
		{name: "plain values", give: map[string]any{"a": "$(params.branch)", "b": "$(context.params.callback-token)"}, secret: false},
		{name: "no reference", give: "s3cr3t", secret: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, secret, err := sc.ValueSecret(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if secret != tt.secret {
				t.Errorf("ValueSecret(%v) secret = %v, want %v", tt.give, secret, tt.secret)
			}
			if s, ok := tt.give.(string); ok {
				if _, secret, _ := sc.StringSecret(s); secret != tt.secret {
					t.Errorf("StringSecret(%q) secret = %v, want %v", s, secret, tt.secret)
				}
			}
		})
	}

	withTask, err := sc.WithTask(map[string]any{"token": "Bearer $(team.params.owner)", "plain": "$(params.branch)"})
	if err != nil {
		t.Fatal(err)
	}
	if !withTask.Secret.Task["token"] || withTask.Secret.Task["plain"] {
		t.Errorf("WithTask secret names = %v, want token alone", withTask.Secret.Task)
	}
}
