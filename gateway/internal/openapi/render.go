package openapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"html/template"
	"regexp"
	"slices"
	"strings"
)

// The page is rendered on the server from the document, once: it needs no script, loads
// nothing from elsewhere (Baton runs where the web may be out of reach) and works in any
// browser or terminal browser. Tools that want the machine-readable form take
// /api/v2/openapi.yaml, which the page links.

// pageCSS is the page's only style, allowed by its hash in the Content-Security-Policy.
const pageCSS = `
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2430;background:#fff}
main{max-width:70rem;margin:0 auto;padding:1rem 1.5rem 4rem}
h1{margin:.5rem 0 0}h2{border-bottom:2px solid #d5dbe3;padding-bottom:.25rem;margin-top:2.5rem}
h3{font-size:1rem;margin:0;display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
h4{margin:.9rem 0 .3rem;font-size:.9rem;text-transform:uppercase;letter-spacing:.03em;color:#4a5668}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f2f4f7;padding:0 .25rem;border-radius:3px}
a{color:#1d5fbf}
.op{border:1px solid #d5dbe3;border-radius:6px;padding:.8rem 1rem;margin:1rem 0}
.op.deprecated{background:#fafafa;border-style:dashed}
.m{font:700 12px/1 ui-monospace,monospace;padding:.3rem .45rem;border-radius:4px;color:#fff;min-width:3.6rem;text-align:center}
.GET{background:#2f7d32}.POST{background:#1d5fbf}.PUT{background:#a05a00}.PATCH{background:#6d3fb0}.DELETE{background:#b3261e}
.path{font-weight:600;background:none;padding:0}
.badge{font-size:12px;border-radius:10px;padding:0 .5rem;border:1px solid}
.b-dep{color:#8a5a00;border-color:#e0b050}.b-open{color:#2f7d32;border-color:#8bc48e}.b-gw{color:#555;border-color:#bbb}
.summary{margin:.4rem 0;font-weight:600}
.sec,.maps{color:#4a5668;font-size:.9rem;margin:.3rem 0}
table{border-collapse:collapse;width:100%;font-size:.9rem;margin:.2rem 0}
th,td{text-align:left;vertical-align:top;border-top:1px solid #e4e8ee;padding:.3rem .5rem}
th{font-weight:600;color:#4a5668;border-top:none}
td:first-child{white-space:nowrap}
.req{color:#b3261e;font-size:.8rem}.ro{color:#4a5668;font-size:.8rem}
.desc p{margin:.4rem 0}td p,td ul{margin:0}
.index td{border:none;padding:.15rem .5rem}.index .m{display:inline-block}
nav ul{columns:2;padding-left:1.2rem}
.schema{margin:1.2rem 0}
`

// styleHash is the CSP source allowing pageCSS.
var styleHash = func() string {
	sum := sha256.Sum256([]byte(pageCSS))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} API {{.Version}}</title>
<style>` + pageCSS + `</style>
</head>
<body>
<main>
<h1>{{.Title}} API <small>{{.Version}}</small></h1>
<p>{{.Summary}}</p>
<p>The machine-readable document: <a href="/api/v2/openapi.yaml">/api/v2/openapi.yaml</a> (OpenAPI {{.OpenAPI}}).</p>
<div class="desc">{{.Description}}</div>

<h2 id="authentication">Authentication</h2>
<table>
<tr><th>Scheme</th><th>How</th><th>Description</th></tr>
{{range .Schemes}}<tr><td><code>{{.Name}}</code></td><td>{{.How}}</td><td>{{.Description}}</td></tr>
{{end}}</table>

<nav>
<h2 id="contents">Contents</h2>
<ul>
{{range .Groups}}<li><a href="#tag-{{.Anchor}}">{{.Name}}</a> ({{len .Operations}})</li>
{{end}}<li><a href="#schemas">Schemas</a> ({{len .Schemas}})</li>
<li><a href="#errors">Error catalogue</a> ({{len .Catalogue}})</li>
</ul>
</nav>

{{range .Groups}}
<h2 id="tag-{{.Anchor}}">{{.Name}}</h2>
<p>{{.Description}}</p>
<table class="index">
{{range .Operations}}<tr><td><span class="m {{.Method}}">{{.Method}}</span></td><td><a href="#{{.ID}}"><code class="path">{{.Path}}</code></a>{{if .Deprecated}} <span class="badge b-dep">deprecated</span>{{end}}</td><td>{{.Summary}}</td></tr>
{{end}}</table>
{{range .Operations}}
<section class="op{{if .Deprecated}} deprecated{{end}}" id="{{.ID}}">
<h3><span class="m {{.Method}}">{{.Method}}</span> <code class="path">{{.Path}}</code>
{{if .Deprecated}}<span class="badge b-dep">deprecated</span>{{end}}
{{if .Open}}<span class="badge b-open">open</span>{{end}}
{{if .ServedBy}}<span class="badge b-gw">served by the {{.ServedBy}}</span>{{end}}</h3>
<p class="summary">{{.Summary}}</p>
{{if .Description}}<div class="desc">{{.Description}}</div>{{end}}
{{if .MapsTo}}<p class="maps">Answered by <code>{{.MapsTo}}</code>.</p>{{end}}
<p class="sec">{{.Security}}</p>
{{if .Parameters}}<h4>Parameters</h4>
<table>
<tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr>
{{range .Parameters}}<tr><td><code>{{.Name}}</code>{{if .Required}} <span class="req">required</span>{{end}}</td><td>{{.In}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}
{{with .Body}}<h4>Request body{{if .Required}} <span class="req">required</span>{{end}}</h4>
<table>
<tr><th>Content type</th><th>Schema</th></tr>
{{range .Content}}<tr><td><code>{{.Type}}</code></td><td>{{.Schema}}</td></tr>
{{end}}</table>{{end}}
<h4>Responses</h4>
<table>
<tr><th>Status</th><th>Description</th><th>Body</th></tr>
{{range .Responses}}<tr><td><code>{{.Status}}</code></td><td>{{.Description}}{{range .Headers}}<br>Header <code>{{.Name}}</code>: {{.Description}}{{end}}</td><td>{{range $i, $c := .Content}}{{if $i}}<br>{{end}}<code>{{$c.Type}}</code> {{$c.Schema}}{{end}}</td></tr>
{{end}}</table>
</section>
{{end}}
{{end}}

<h2 id="schemas">Schemas</h2>
{{range .Schemas}}
<section class="schema" id="schema-{{.Name}}">
<h3>{{.Name}}</h3>
{{if .Description}}<div class="desc">{{.Description}}</div>{{end}}
<p>{{.Type}}</p>
{{if .Properties}}<table>
<tr><th>Field</th><th>Type</th><th>Description</th></tr>
{{range .Properties}}<tr><td><code>{{.Name}}</code>{{if .Required}} <span class="req">required</span>{{end}}{{if .ReadOnly}} <span class="ro">read-only</span>{{end}}</td><td>{{.Type}}</td><td>{{.Description}}</td></tr>
{{end}}</table>{{end}}
</section>
{{end}}

<h2 id="errors">Error catalogue</h2>
<p>Every error answers an <a href="#schema-ErrorBody">ErrorBody</a> with one of these reasons.</p>
<table>
<tr><th>Reason</th><th>Code</th><th>HTTP status</th></tr>
{{range .Catalogue}}<tr><td><code>{{.Reason}}</code></td><td>{{.Code}}</td><td>{{.Status}}</td></tr>
{{end}}</table>
</main>
</body>
</html>
`))

// The view the template renders.
type (
	pageView struct {
		Title, Version, Summary, OpenAPI string
		Description                      template.HTML
		Schemes                          []schemeView
		Groups                           []groupView
		Schemas                          []schemaView
		Catalogue                        []catalogueEntry
	}
	schemeView struct {
		Name        string
		How         template.HTML
		Description template.HTML
	}
	groupView struct {
		Name, Anchor string
		Description  template.HTML
		Operations   []operationView
	}
	operationView struct {
		ID, Method, Path, Summary, MapsTo, ServedBy string
		Deprecated, Open                            bool
		Description                                 template.HTML
		Security                                    template.HTML
		Parameters                                  []parameterView
		Body                                        *bodyView
		Responses                                   []responseView
	}
	parameterView struct {
		Name, In    string
		Required    bool
		Type        template.HTML
		Description template.HTML
	}
	bodyView struct {
		Required bool
		Content  []contentView
	}
	contentView struct {
		Type   string
		Schema template.HTML
	}
	responseView struct {
		Status      string
		Description template.HTML
		Headers     []headerView
		Content     []contentView
	}
	headerView struct {
		Name        string
		Description template.HTML
	}
	schemaView struct {
		Name        string
		Description template.HTML
		Type        template.HTML
		Properties  []propertyView
	}
	propertyView struct {
		Name               string
		Required, ReadOnly bool
		Type               template.HTML
		Description        template.HTML
	}
)

// render returns the HTML page describing doc.
func render(doc *document) ([]byte, error) {
	v := pageView{
		Title: doc.Info.Title, Version: doc.Info.Version, Summary: doc.Info.Summary, OpenAPI: doc.OpenAPI,
		Description: markdown(doc.Info.Description), Catalogue: doc.Catalogue,
	}
	for _, s := range doc.Components.SecuritySchemes {
		v.Schemes = append(v.Schemes, schemeView{Name: s.Key, How: schemeHow(s.Value), Description: markdown(s.Value.Description)})
	}
	v.Groups = groups(doc)
	for _, s := range doc.Components.Schemas {
		v.Schemas = append(v.Schemas, schemaViewOf(s.Key, s.Value))
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// groups lists the operations by their first tag, tags in the document's order, then any
// operation whose tag the document does not declare.
func groups(doc *document) []groupView {
	var out []groupView
	index := map[string]int{}
	for _, t := range doc.Tags {
		index[t.Name] = len(out)
		out = append(out, groupView{Name: t.Name, Anchor: anchor(t.Name), Description: markdown(t.Description)})
	}
	for _, p := range doc.Paths {
		for _, op := range p.Value.Operations {
			name := "Other"
			if len(op.Tags) > 0 {
				name = op.Tags[0]
			}
			i, ok := index[name]
			if !ok {
				i = len(out)
				index[name] = i
				out = append(out, groupView{Name: name, Anchor: anchor(name)})
			}
			out[i].Operations = append(out[i].Operations, operationViewOf(doc, p.Key, p.Value, op))
		}
	}
	return slices.DeleteFunc(out, func(g groupView) bool { return len(g.Operations) == 0 })
}

func operationViewOf(doc *document, path string, item pathItem, op methodOperation) operationView {
	v := operationView{
		ID: op.OperationID, Method: op.Method, Path: path, Summary: op.Summary, MapsTo: op.MapsTo,
		ServedBy: op.ServedBy, Deprecated: op.Deprecated, Description: markdown(op.Description),
	}
	if v.ID == "" {
		v.ID = anchor(op.Method + " " + path)
	}
	v.Open, v.Security = securityText(doc, doc.security(op.operation))
	for _, p := range doc.parameters(item, op.operation) {
		v.Parameters = append(v.Parameters, parameterView{
			Name: p.Name, In: p.In, Required: p.Required, Type: typeHTML(p.Schema),
			Description: markdown(p.Description + defaultText(p.Schema)),
		})
	}
	if rb := op.RequestBody; rb != nil {
		body := &bodyView{Required: rb.Required}
		for _, c := range rb.Content {
			body.Content = append(body.Content, contentView{Type: c.Key, Schema: typeHTML(c.Value.Schema)})
		}
		v.Body = body
	}
	for _, e := range op.Responses {
		r := doc.response(e.Value)
		rv := responseView{Status: e.Key, Description: markdown(r.Description)}
		for _, h := range r.Headers {
			rv.Headers = append(rv.Headers, headerView{Name: h.Key, Description: markdown(doc.header(h.Value).Description)})
		}
		for _, c := range r.Content {
			rv.Content = append(rv.Content, contentView{Type: c.Key, Schema: typeHTML(c.Value.Schema)})
		}
		v.Responses = append(v.Responses, rv)
	}
	return v
}

// securityText says which credentials an operation takes; open reports whether it needs
// none.
func securityText(doc *document, reqs []map[string][]string) (open bool, text template.HTML) {
	var names []string
	for _, r := range reqs {
		if len(r) == 0 {
			open = true
		}
		for name := range r {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	// Listed in the order the document declares the schemes.
	var hows []string
	for _, s := range doc.Components.SecuritySchemes {
		if slices.Contains(names, s.Key) {
			hows = append(hows, string(schemeHow(s.Value)))
		}
	}
	switch {
	case open && len(hows) == 0:
		return true, "Open: no credentials needed."
	case open:
		return true, template.HTML("Open; credentials are optional: " + strings.Join(hows, ", ") + ".")
	default:
		return false, template.HTML("Credentials: " + strings.Join(hows, ", or ") + ".")
	}
}

func schemeHow(s securityScheme) template.HTML {
	switch {
	case s.Type == "http":
		return template.HTML("<code>Authorization: " + html.EscapeString(capitalize(s.Scheme)) + " &lt;token&gt;</code>")
	case s.Type == "apiKey" && s.In == "header":
		return template.HTML("<code>" + html.EscapeString(s.Name) + ": &lt;token&gt;</code> header")
	case s.Type == "apiKey" && s.In == "query":
		return template.HTML("<code>?" + html.EscapeString(s.Name) + "=&lt;token&gt;</code>")
	}
	return template.HTML(html.EscapeString(s.Type))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func schemaViewOf(name string, s *schema) schemaView {
	v := schemaView{Name: name, Description: markdown(s.Description), Type: typeHTML(s)}
	if len(s.Properties) > 0 && len(s.AllOf) == 0 {
		v.Type = "object" // its fields follow
	}
	// A composition lists the fields of its inline parts; its referenced parts are linked
	// in its type.
	parts := []*schema{s}
	if len(s.AllOf) > 0 {
		parts = s.AllOf
	}
	for _, part := range parts {
		for _, p := range part.Properties {
			v.Properties = append(v.Properties, propertyView{
				Name: p.Key, Required: slices.Contains(part.Required, p.Key), ReadOnly: p.Value.ReadOnly,
				Type: typeHTML(p.Value), Description: markdown(p.Value.Description + defaultText(p.Value)),
			})
		}
	}
	return v
}

// typeHTML describes a schema in a few words, linking the named schemas it uses.
func typeHTML(s *schema) template.HTML {
	if s == nil {
		return "any"
	}
	if s.Ref != "" {
		name := html.EscapeString(refName(s.Ref))
		return template.HTML(`<a href="#schema-` + name + `">` + name + `</a>`)
	}
	join := func(list []*schema, sep string) template.HTML {
		parts := make([]string, len(list))
		for i, p := range list {
			parts[i] = string(typeHTML(p))
		}
		return template.HTML(strings.Join(parts, sep))
	}
	switch {
	case len(s.AllOf) > 0:
		return join(s.AllOf, " and ")
	case len(s.OneOf) > 0:
		return join(s.OneOf, " or ")
	case len(s.AnyOf) > 0:
		return join(s.AnyOf, " or ")
	}
	var words []string
	for _, t := range s.Type {
		var w string
		switch {
		case t == "array":
			w = "array of " + string(typeHTML(s.Items))
		case t == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && len(s.Properties) == 0:
			w = "map of " + string(typeHTML(s.AdditionalProperties.Schema))
		case t == "object" && len(s.Properties) > 0:
			keys := make([]string, len(s.Properties))
			for i, p := range s.Properties {
				keys[i] = html.EscapeString(p.Key)
			}
			w = "object {" + strings.Join(keys, ", ") + "}"
		default:
			w = html.EscapeString(t)
		}
		if s.Format != "" && t != "array" {
			w += " (" + html.EscapeString(s.Format) + ")"
		}
		words = append(words, w)
	}
	out := strings.Join(words, " or ")
	if out == "" {
		out = "any"
	}
	if len(s.Enum) > 0 {
		values := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			values[i] = "<code>" + html.EscapeString(fmt.Sprint(e)) + "</code>"
		}
		out += ": " + strings.Join(values, ", ")
	}
	if s.Const != nil {
		out += " <code>" + html.EscapeString(fmt.Sprint(s.Const)) + "</code>"
	}
	var bounds []string
	if s.Minimum != nil {
		bounds = append(bounds, fmt.Sprintf("≥ %g", *s.Minimum))
	}
	if s.Maximum != nil {
		bounds = append(bounds, fmt.Sprintf("≤ %g", *s.Maximum))
	}
	if s.MaxLength != nil {
		bounds = append(bounds, fmt.Sprintf("at most %d characters", *s.MaxLength))
	}
	if s.Pattern != "" {
		bounds = append(bounds, "<code>"+html.EscapeString(s.Pattern)+"</code>")
	}
	if len(bounds) > 0 {
		out += ", " + strings.Join(bounds, ", ")
	}
	if s.Deprecated {
		out += " (deprecated)"
	}
	return template.HTML(out)
}

// defaultText is " Default: `x`." for a schema with a default.
func defaultText(s *schema) string {
	if s == nil || s.Default == nil {
		return ""
	}
	return fmt.Sprintf(" Default: `%v`.", s.Default)
}

var (
	codeSpan   = regexp.MustCompile("`([^`]+)`")
	strongSpan = regexp.MustCompile(`\*\*([^*]+)\*\*`)
	nonAnchor  = regexp.MustCompile(`[^a-z0-9]+`)
)

// markdown renders the little Markdown the document's descriptions use: paragraphs,
// "- " lists, `code` and **strong**. Everything else is escaped text. A single paragraph
// is left bare, to sit inside a table cell or a sentence.
func markdown(s string) template.HTML {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	inline := func(line string) string {
		line = html.EscapeString(line)
		line = codeSpan.ReplaceAllString(line, "<code>$1</code>")
		return strongSpan.ReplaceAllString(line, "<strong>$1</strong>")
	}
	paras := strings.Split(s, "\n\n")
	var b strings.Builder
	for _, para := range paras {
		lines := strings.Split(strings.TrimSpace(para), "\n")
		if strings.HasPrefix(lines[0], "- ") {
			// A list item runs until the next line starting with "- ".
			var items []string
			for _, l := range lines {
				l = strings.TrimSpace(l)
				if rest, ok := strings.CutPrefix(l, "- "); ok {
					items = append(items, rest)
				} else if len(items) > 0 {
					items[len(items)-1] += " " + l
				}
			}
			b.WriteString("<ul>")
			for _, it := range items {
				b.WriteString("<li>" + inline(it) + "</li>")
			}
			b.WriteString("</ul>")
			continue
		}
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		if len(paras) == 1 {
			return template.HTML(inline(strings.Join(lines, " ")))
		}
		b.WriteString("<p>" + inline(strings.Join(lines, " ")) + "</p>")
	}
	return template.HTML(b.String())
}

// anchor makes a fragment id of a name: "Workflow runs" → "workflow-runs".
func anchor(name string) string {
	return strings.Trim(nonAnchor.ReplaceAllString(strings.ToLower(name), "-"), "-")
}
