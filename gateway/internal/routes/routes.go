// Package routes holds the gateway's routing table — every method and path of /api/v2, the
// service owning it and how the gateway treats it — and matches requests against it.
//
// Patterns are paths whose segments are literals or {param}s; a {param} matches one
// non-empty segment. The most specific pattern wins: at each segment a literal beats a
// parameter, so /api/v2/team/query is never read as a team named "query".
package routes

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/workflowid"
)

// Access is how the gateway authorizes a route's requests before proxying them. It is a
// first, coarse check from the path alone: services keep their own (defence in depth).
type Access uint8

const (
	// Check (the default) requires principal.Can(scope, Resource, Action). The scope is the
	// {team} parameter, with {name} as the workflow on Workflow routes; routes without
	// {team} are checked instance-wide.
	Check Access = iota
	// Authenticated admits every authenticated caller: the route answers all of them alike
	// (features, roles, a cron check) or the service filters the answer to the caller.
	Authenticated
	// ServiceDecides passes every authenticated request on: the decision needs data the
	// gateway lacks (whose profile, which team a task run belongs to, the team named in a
	// body or query, a run's callback token, who may create teams). The owning service
	// decides with auth.Require.
	ServiceDecides
)

func (a Access) String() string {
	switch a {
	case Check:
		return "check"
	case Authenticated:
		return "authenticated"
	case ServiceDecides:
		return "service decides"
	}
	return fmt.Sprintf("Access(%d)", uint8(a))
}

// Route is one method and path pattern of the surface, with the service that answers it.
// LongPollWait is the longest wait of a LongPoll route (a worker's waitSeconds).
const LongPollWait = 60 * time.Second

type Route struct {
	// Method is the HTTP method, upper case. A GET route also answers HEAD.
	Method string
	// Pattern is the path pattern, e.g. /api/v2/team/{team}/workflow/{name}/submit.
	Pattern string
	// Service owns the route: the name the gateway resolves to instances.
	Service string
	// BodyLimit is the largest request body in bytes; httpx.DefaultBodyLimit when zero.
	BodyLimit int
	// QueryToken accepts the credential in the access_token query parameter, for senders
	// that cannot set headers (webhooks, events, callback links).
	QueryToken bool
	// Open routes need no credentials; credentials a request does carry are still checked.
	Open bool
	// Streaming routes may answer with a long-lived stream (a followed task-run log): the
	// response is passed on as it arrives and, when following, has no total timeout.
	Streaming bool
	// Feed routes, Streaming ones, always answer with a stream (Server-Sent Events): a
	// run's changes, followed until it ends.
	Feed bool
	// LongPoll routes may hold their answer while they wait for something to come (a
	// worker's claim, up to LongPollWait): the upstream timeout runs from the end of that
	// wait.
	LongPoll bool
	// Deprecated marks the compatibility paths of older clients.
	Deprecated bool
	// Extension marks what Baton serves beyond the seed's interface (API.md names each).
	Extension bool
	// RewritePath is the pattern of the path sent upstream, filled from this route's
	// parameters; empty sends the request's own path.
	RewritePath string
	// RewriteMethod is the method sent upstream; empty sends the request's own.
	RewriteMethod string

	// Access, Resource and Action are the gateway's authorization of the route (see
	// Access). Open routes are not authorized at the gateway and leave them empty.
	Access   Access
	Resource string
	Action   string
	// Workflow routes act on the workflow {name} of {team}, so the check is in that
	// workflow's scope and the workflow's own tokens may pass.
	Workflow bool
	// InWorkflow routes act on something of one workflow that the path does not name (a
	// run): a workflow token of {team} holding the permission passes on to the service,
	// which checks it against the workflow the thing belongs to.
	InWorkflow bool
	// SignUp routes admit a verified sign-in whose user is not registered yet (a session
	// principal without an id): GET /profile registers them. Every other route refuses such
	// a principal, which has no user to act for.
	SignUp bool
	// ChangesMembership routes may change the caller's own teams or roles (creating a team
	// makes its creator the owner): after one succeeds, the gateway forgets the caller's
	// cached principal so the next request sees the change.
	ChangesMembership bool
	// RunCallback routes (the callbacks) admit a run's callback token, whose run the service
	// checks against the request. Every other route refuses such a token, even one that
	// would pass on to its service unchecked: it may do nothing but answer its run's
	// callbacks.
	RunCallback bool
	// Named routes act on one resource of Resource named by the path parameter of the
	// resource's own name (a queue's routes by {queue}): the check is of
	// `<resource>:<name>` (auth.NamedResources), which a grant of that name, of the whole
	// resource or of every resource passes.
	Named bool

	params  []string // parameter names of Pattern, in order
	rewrite []part   // RewritePath compiled
	team    int      // index of {team} in params, or -1
	name    int      // index of {name} in params, or -1
	named   int      // index of the parameter naming the resource of a Named route, or -1
}

// part is one piece of a compiled rewrite: a literal, or the value of parameter index.
type part struct {
	literal string
	index   int
}

// maxParams bounds the parameters of one pattern so that Params needs no allocation.
const maxParams = 4

// Params are the parameter values a match captured, raw (still percent-encoded) as the
// client sent them.
type Params struct {
	names  []string
	values [maxParams]string
	n      int
}

// Get returns the value of the named parameter, or "" if the pattern has none of that name.
func (p *Params) Get(name string) string {
	for i, n := range p.names {
		if n == name && i < p.n {
			return p.values[i]
		}
	}
	return ""
}

// Len returns the number of parameters captured.
func (p *Params) Len() int { return p.n }

// Errors of Match.
var (
	// ErrNotFound means no route has the path.
	ErrNotFound = errors.New("no route for the path")
	// ErrMethodNotAllowed means routes have the path, but none the method.
	ErrMethodNotAllowed = errors.New("method not allowed for the path")
)

// methods are the methods a table knows, indexed for the per-node route arrays.
var methods = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

const (
	methodGet  = 0
	methodHead = 1
)

func methodIndex(m string) int {
	switch m {
	case "GET":
		return 0
	case "HEAD":
		return 1
	case "POST":
		return 2
	case "PUT":
		return 3
	case "PATCH":
		return 4
	case "DELETE":
		return 5
	case "OPTIONS":
		return 6
	}
	return -1
}

// node is one segment position of the trie of patterns.
type node struct {
	literals map[string]*node
	param    *node
	routes   [len(methods)]*Route
	leaf     bool // some pattern ends here
}

// Table is a compiled routing table, safe for concurrent use.
type Table struct {
	routes []Route
	root   node
}

// New compiles routes into a Table. It fails on malformed patterns, unknown methods and
// duplicate method and pattern pairs.
func New(routes []Route) (*Table, error) {
	t := &Table{routes: append([]Route(nil), routes...)}
	for i := range t.routes {
		r := &t.routes[i]
		if err := t.add(r); err != nil {
			return nil, fmt.Errorf("route %s %s: %w", r.Method, r.Pattern, err)
		}
	}
	return t, nil
}

// Default compiles the declared table; it panics only if the declaration itself is broken,
// which the package's tests rule out.
func Default() *Table {
	t, err := New(declared)
	if err != nil {
		panic(err)
	}
	return t
}

// Routes returns the table's routes, defaults filled in.
func (t *Table) Routes() []Route {
	return append([]Route(nil), t.routes...)
}

func (t *Table) add(r *Route) error {
	m := methodIndex(r.Method)
	if m < 0 {
		return fmt.Errorf("unknown method %q", r.Method)
	}
	if r.Service == "" {
		return errors.New("no service")
	}
	if r.BodyLimit < 0 {
		return errors.New("negative body limit")
	}
	if r.BodyLimit == 0 {
		r.BodyLimit = httpx.DefaultBodyLimit
	}
	if r.RewriteMethod != "" && methodIndex(r.RewriteMethod) < 0 {
		return fmt.Errorf("unknown rewrite method %q", r.RewriteMethod)
	}
	segs, err := splitPattern(r.Pattern)
	if err != nil {
		return err
	}
	n := &t.root
	for _, s := range segs {
		if name, ok := paramName(s); ok {
			if slices.Contains(r.params, name) {
				return fmt.Errorf("parameter {%s} repeated", name)
			}
			r.params = append(r.params, name)
			if n.param == nil {
				n.param = &node{}
			}
			n = n.param
			continue
		}
		if n.literals == nil {
			n.literals = map[string]*node{}
		}
		child := n.literals[s]
		if child == nil {
			child = &node{}
			n.literals[s] = child
		}
		n = child
	}
	if len(r.params) > maxParams {
		return fmt.Errorf("more than %d parameters", maxParams)
	}
	r.team, r.name = slices.Index(r.params, "team"), slices.Index(r.params, "name")
	r.named = -1
	if r.Named {
		r.named = slices.Index(r.params, r.Resource)
	}
	if err := r.checkAccess(); err != nil {
		return err
	}
	if n.routes[m] != nil {
		return errors.New("declared twice")
	}
	n.routes[m] = r
	n.leaf = true
	if r.RewritePath != "" {
		if r.rewrite, err = compileRewrite(r.RewritePath, r.params); err != nil {
			return err
		}
	}
	return nil
}

func splitPattern(p string) ([]string, error) {
	if !strings.HasPrefix(p, "/") || len(p) < 2 || strings.HasSuffix(p, "/") {
		return nil, fmt.Errorf("pattern %q must start with / and not end with one", p)
	}
	segs := strings.Split(p[1:], "/")
	for _, s := range segs {
		if s == "" {
			return nil, fmt.Errorf("pattern %q has an empty segment", p)
		}
		if strings.ContainsAny(s, "{}") {
			if _, ok := paramName(s); !ok {
				return nil, fmt.Errorf("pattern %q: malformed parameter %q", p, s)
			}
		}
	}
	return segs, nil
}

// paramName returns the name of a {param} segment.
func paramName(seg string) (string, bool) {
	if len(seg) < 3 || seg[0] != '{' || seg[len(seg)-1] != '}' {
		return "", false
	}
	name := seg[1 : len(seg)-1]
	if strings.ContainsAny(name, "{}") {
		return "", false
	}
	return name, true
}

func compileRewrite(p string, params []string) ([]part, error) {
	segs, err := splitPattern(p)
	if err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	var parts []part
	lit := ""
	for _, s := range segs {
		name, ok := paramName(s)
		if !ok {
			lit += "/" + s
			continue
		}
		i := slices.Index(params, name)
		if i < 0 {
			return nil, fmt.Errorf("rewrite uses {%s}, which the pattern lacks", name)
		}
		parts = append(parts, part{literal: lit + "/", index: -1}, part{index: i})
		lit = ""
	}
	if lit != "" {
		parts = append(parts, part{literal: lit, index: -1})
	}
	return parts, nil
}

// Match finds the route for method and path (the raw path, without query). It returns
// ErrNotFound when no route has the path and ErrMethodNotAllowed when some route has the
// path but none the method. It does not allocate.
func (t *Table) Match(method, path string) (*Route, Params, error) {
	var p Params
	if len(path) == 0 || path[0] != '/' {
		return nil, p, ErrNotFound
	}
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	r, exists := t.root.find(path, methodIndex(method), &p)
	switch {
	case r != nil:
		p.names = r.params
		return r, p, nil
	case exists:
		return nil, Params{}, ErrMethodNotAllowed
	default:
		return nil, Params{}, ErrNotFound
	}
}

// find matches rest (empty, or starting with the '/' before the next segment) below n. It
// tries the literal child before the parameter child and backs off to the parameter when the
// literal branch has no route for the method. exists reports whether any route, of any
// method, has the path.
func (n *node) find(rest string, m int, p *Params) (r *Route, exists bool) {
	if rest == "" {
		if !n.leaf {
			return nil, false
		}
		if m >= 0 {
			if r = n.routes[m]; r == nil && m == methodHead {
				r = n.routes[methodGet]
			}
		}
		return r, true
	}
	seg, next := rest[1:], ""
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg, next = seg[:i], seg[i:]
	}
	if child := n.literals[seg]; child != nil {
		if r, exists = child.find(next, m, p); r != nil {
			return r, true
		}
	}
	if n.param != nil && seg != "" && p.n < maxParams {
		p.values[p.n] = seg
		p.n++
		r, found := n.param.find(next, m, p)
		if r != nil {
			return r, true
		}
		p.n--
		exists = exists || found
	}
	return nil, exists
}

// Allowed returns the methods the routes matching path accept, for the Allow header of a
// 405 answer.
func (t *Table) Allowed(path string) []string {
	if len(path) > 1 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	var set [len(methods)]bool
	t.root.collect(path, &set)
	if set[methodGet] {
		set[methodHead] = true
	}
	var out []string
	for i, ok := range set {
		if ok {
			out = append(out, methods[i])
		}
	}
	return out
}

func (n *node) collect(rest string, set *[len(methods)]bool) {
	if rest == "" {
		for i, r := range n.routes {
			if r != nil {
				set[i] = true
			}
		}
		return
	}
	seg, next := rest[1:], ""
	if i := strings.IndexByte(seg, '/'); i >= 0 {
		seg, next = seg[:i], seg[i:]
	}
	if child := n.literals[seg]; child != nil {
		child.collect(next, set)
	}
	if n.param != nil && seg != "" {
		n.param.collect(next, set)
	}
}

// AppendUpstreamPath appends to dst the path to send upstream for a request to path that
// matched r with p: path itself, or the route's rewrite filled with p's raw values.
func (r *Route) AppendUpstreamPath(dst []byte, path string, p *Params) []byte {
	if r.rewrite == nil {
		return append(dst, path...)
	}
	for _, pt := range r.rewrite {
		if pt.index < 0 {
			dst = append(dst, pt.literal...)
		} else if pt.index < p.n {
			dst = append(dst, p.values[pt.index]...)
		}
	}
	return dst
}

// checkAccess refuses a route without a sound authorization decision.
func (r *Route) checkAccess() error {
	if r.RunCallback && (r.Open || r.Access != ServiceDecides) {
		return errors.New("a route that admits run tokens leaves the decision to its service (ServiceDecides), which checks the run")
	}
	if r.Open {
		if r.Access != Check || r.Resource != "" || r.Action != "" || r.Workflow || r.InWorkflow {
			return errors.New("open routes are not authorized at the gateway: give no access rule")
		}
		return nil
	}
	switch r.Access {
	case Check:
		if r.Resource == "" && r.Action == "" {
			return errors.New("no authorization decision: give Resource and Action, or an Access")
		}
		if !slices.Contains(auth.Resources, r.Resource) {
			return fmt.Errorf("unknown resource %q", r.Resource)
		}
		if !slices.Contains(auth.Actions, r.Action) {
			return fmt.Errorf("unknown action %q", r.Action)
		}
	case Authenticated, ServiceDecides:
		if r.Resource != "" || r.Action != "" || r.Workflow || r.InWorkflow {
			return fmt.Errorf("access %q checks nothing at the gateway: give no resource, action or scope", r.Access)
		}
	default:
		return fmt.Errorf("unknown access %d", r.Access)
	}
	if r.Workflow && (r.team < 0 || r.name < 0) {
		return errors.New("a workflow route needs {team} and {name}")
	}
	if r.InWorkflow && r.team < 0 {
		return errors.New("an in-workflow route needs {team}")
	}
	if r.Named && (!slices.Contains(auth.NamedResources, r.Resource) || r.named < 0) {
		return fmt.Errorf("a named route needs a resource of auth.NamedResources and its {%s} in the path", r.Resource)
	}
	return nil
}

// Authorize checks that p may make a request that matched r with params: 403
// PERMISSION_DENIED when it may not. It does not allocate when p may, but to name the
// resource of a Named route.
//
// Path values are compared as the client sent them (still percent-encoded), as services
// read them: an encoded team name never matches a team a caller belongs to.
func (r *Route) Authorize(p *auth.Principal, params *Params) error {
	if p.Type == auth.TypeRun && !r.RunCallback {
		return apperr.New(apperr.PermissionDenied, "A run's callback token may only answer that run's callbacks.")
	}
	if r.Open || r.Access != Check {
		return nil
	}
	var scope auth.Scope
	if r.team >= 0 && r.team < params.n {
		scope.Team = params.values[r.team]
	}
	if r.Workflow && r.name >= 0 && r.name < params.n {
		// The workflow may be named by its id (v4 clients), which the service reads as
		// the name it stands for; so must the check.
		scope.Workflow = workflowid.Resolve(scope.Team, params.values[r.name])
	}
	resource := r.Resource
	if r.named >= 0 && r.named < params.n {
		resource = auth.Named(r.Resource, params.values[r.named])
	}
	if p.Can(scope, resource, r.Action) {
		return nil
	}
	if r.InWorkflow && p.Type == auth.TypeWorkflow && scope.Team != "" && p.Team == scope.Team &&
		slices.ContainsFunc(p.Permissions, func(g string) bool { return auth.Grants(g, r.Resource, r.Action) }) {
		return nil
	}
	where := "this instance"
	switch {
	case scope.Workflow != "":
		where = "workflow '" + scope.Team + "/" + scope.Workflow + "'"
	case scope.Team != "":
		where = "team '" + scope.Team + "'"
	}
	return apperr.New(apperr.PermissionDenied, "Not allowed to %s %s in %s.", r.Action, resource, where)
}

// UpstreamMethod returns the method to send upstream for a request with method.
func (r *Route) UpstreamMethod(method string) string {
	if r.RewriteMethod != "" {
		return r.RewriteMethod
	}
	return method
}
