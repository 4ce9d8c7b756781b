package routes

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/httpx"
)

// endpoint is one method and full path pattern of the seed.
type endpoint struct{ method, path string }

// seedEndpoints reads every endpoint from the tables of the customer's interface. Two
// tables list suffixes: workflow runs under /api/v2/team/{team}/workflowrun, and tasks under
// both /api/v2/team/{team}/task and /api/v2/task (delete on the team path only).
func seedEndpoints(t *testing.T) []endpoint {
	t.Helper()
	f, err := os.Open("testdata/seed.txt")
	require.NoError(t, err)
	defer f.Close()

	var (
		out     []endpoint
		section string
	)
	isMethod := map[string]bool{"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "### "); ok {
			section = h
			continue
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		method, path := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[2])
		if !isMethod[method] {
			continue
		}
		switch section {
		case "Workflow runs":
			out = append(out, endpoint{method, "/api/v2/team/{team}/workflowrun" + path})
		case "Tasks, team-scoped and global":
			suffix, teamOnly := strings.CutSuffix(path, " (team-scoped only)")
			if suffix == "(none)" {
				suffix = ""
			}
			out = append(out, endpoint{method, "/api/v2/team/{team}/task" + suffix})
			if !teamOnly {
				out = append(out, endpoint{method, "/api/v2/task" + suffix})
			}
		default:
			require.Truef(t, strings.HasPrefix(path, "/api/v2"), "section %q: path %q", section, path)
			out = append(out, endpoint{method, path})
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// ownerOf is the owning service of a seed path family, per ARCHITECTURE.md. The first
// matching prefix wins, so submit is checked before the rest of the workflow family.
func ownerOf(t *testing.T, path string) string {
	t.Helper()
	families := []struct{ prefix, service string }{
		{"/api/v2/team/{team}/workflow/{name}/submit", Runs},
		{"/api/v2/team/{team}/workflowrun", Runs},
		{"/api/v2/team/{team}/workflow", Workflows},
		{"/api/v2/workflowtemplate", Workflows},
		{"/api/v2/taskrun/", Runs},
		{"/api/v2/team/{team}/action", Runs},
		{"/api/v2/team/{team}/insights", Runs},
		{"/api/v2/callback", Runs},
		{"/api/v2/team/{team}/task", Tasks},
		{"/api/v2/task", Tasks},
		{"/api/v2/team/{team}/schedule", Schedules},
		{"/api/v2/integration", Integrations},
		{"/api/v2/event", Integrations},
		{"/api/v2/webhook", Integrations},
		{"/api/v2/team", Identity},
		{"/api/v2/user/", Identity},
		{"/api/v2/profile", Identity},
		{"/api/v2/token", Identity},
		{"/api/v2/parameters", Identity},
		{"/api/v2/settings", Identity},
		{"/api/v2/features", Identity},
		{"/api/v2/context", Identity},
		{"/api/v2/navigation", Identity},
		{"/api/v2/activate", Identity},
	}
	for _, f := range families {
		if strings.HasPrefix(path, f.prefix) {
			return f.service
		}
	}
	t.Fatalf("no owning service known for %s", path)
	return ""
}

var paramRE = regexp.MustCompile(`\{[^}]+\}`)

// concrete fills a pattern's parameters with distinct values.
func concrete(pattern string) (string, map[string]string) {
	values := map[string]string{}
	i := 0
	path := paramRE.ReplaceAllStringFunc(pattern, func(p string) string {
		v := fmt.Sprintf("v%d-x", i)
		i++
		values[p[1:len(p)-1]] = v
		return v
	})
	return path, values
}

func TestSeedEndpointsRouteToTheirOwners(t *testing.T) {
	t.Parallel()
	table := Default()
	seed := seedEndpoints(t)
	require.Len(t, seed, 95, "endpoints read from the seed")

	for _, e := range seed {
		t.Run(e.method+" "+e.path, func(t *testing.T) {
			path, values := concrete(e.path)
			r, p, err := table.Match(e.method, path)
			require.NoError(t, err)
			assert.Equal(t, e.path, r.Pattern)
			assert.Equal(t, ownerOf(t, e.path), r.Service)
			assert.False(t, r.Deprecated)
			for name, v := range values {
				assert.Equal(t, v, p.Get(name), "parameter %s", name)
			}
		})
	}

	// The table holds the seed's endpoints and, beyond them, only compatibility paths and
	// the extensions API.md names.
	inSeed := map[endpoint]bool{}
	for _, e := range seed {
		inSeed[e] = true
	}
	for _, r := range table.Routes() {
		if !r.Deprecated && !r.Extension {
			assert.Truef(t, inSeed[endpoint{r.Method, r.Pattern}], "%s %s is not in the seed", r.Method, r.Pattern)
		}
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	table := Default()
	tests := []struct {
		name           string
		method, path   string
		wantErr        error
		wantPattern    string
		wantService    string
		wantParams     map[string]string
		wantUpMethod   string
		wantUpPath     string
		wantOpen       bool
		wantQueryToken bool
	}{
		{name: "literal beats parameter", method: "GET", path: "/api/v2/team/query",
			wantPattern: "/api/v2/team/query", wantService: Identity},
		{name: "team by name", method: "GET", path: "/api/v2/team/infra",
			wantPattern: "/api/v2/team/{team}", wantService: Identity, wantParams: map[string]string{"team": "infra"}},
		{name: "submit belongs to runs", method: "POST", path: "/api/v2/team/infra/workflow/build/submit",
			wantPattern: "/api/v2/team/{team}/workflow/{name}/submit", wantService: Runs,
			wantParams: map[string]string{"team": "infra", "name": "build"}},
		{name: "workflow read", method: "GET", path: "/api/v2/team/infra/workflow/build",
			wantPattern: "/api/v2/team/{team}/workflow/{name}", wantService: Workflows},
		{name: "workflow search", method: "GET", path: "/api/v2/team/infra/workflow/query",
			wantPattern: "/api/v2/team/{team}/workflow/query", wantService: Workflows},
		{name: "literal branch dead end backs off to parameter", method: "GET", path: "/api/v2/team/query/workflow/query",
			wantPattern: "/api/v2/team/{team}/workflow/query", wantService: Workflows, wantParams: map[string]string{"team": "query"}},
		{name: "method missing on literal backs off to parameter", method: "DELETE", path: "/api/v2/team/roles",
			wantPattern: "/api/v2/team/{team}", wantService: Identity, wantParams: map[string]string{"team": "roles"}},
		{name: "trailing slash", method: "GET", path: "/api/v2/team/infra/workflow/build/",
			wantPattern: "/api/v2/team/{team}/workflow/{name}", wantService: Workflows},
		{name: "head answered by get", method: "HEAD", path: "/api/v2/team/infra",
			wantPattern: "/api/v2/team/{team}", wantService: Identity},
		{name: "encoded slash stays in its segment", method: "GET", path: "/api/v2/team/infra/workflow/a%2Fb",
			wantPattern: "/api/v2/team/{team}/workflow/{name}", wantService: Workflows, wantParams: map[string]string{"name": "a%2Fb"}},
		{name: "global task", method: "GET", path: "/api/v2/task/echo/changelog",
			wantPattern: "/api/v2/task/{name}/changelog", wantService: Tasks},
		{name: "global task has no delete", method: "DELETE", path: "/api/v2/task/echo", wantErr: ErrMethodNotAllowed},
		{name: "log stream", method: "GET", path: "/api/v2/taskrun/65a1b2c3d4e5f60718293a4b/log",
			wantPattern: "/api/v2/taskrun/{taskRunId}/log", wantService: Runs},
		{name: "webhook is open and takes a query token", method: "POST", path: "/api/v2/webhook",
			wantPattern: "/api/v2/webhook", wantService: Integrations, wantOpen: true, wantQueryToken: true},
		{name: "callback takes a query token", method: "GET", path: "/api/v2/callback",
			wantPattern: "/api/v2/callback", wantService: Runs, wantQueryToken: true},
		{name: "chat is open", method: "POST", path: "/api/v2/integration/chat/events",
			wantPattern: "/api/v2/integration/chat/events", wantService: Integrations, wantOpen: true},
		{name: "activate is open", method: "PUT", path: "/api/v2/activate",
			wantPattern: "/api/v2/activate", wantService: Identity, wantOpen: true},
		{name: "wrong method", method: "PUT", path: "/api/v2/team/infra", wantErr: ErrMethodNotAllowed},
		{name: "unknown method", method: "BREW", path: "/api/v2/team", wantErr: ErrMethodNotAllowed},
		{name: "unknown path", method: "GET", path: "/api/v2/nope", wantErr: ErrNotFound},
		{name: "prefix of a path", method: "GET", path: "/api/v2", wantErr: ErrNotFound},
		{name: "empty segment", method: "GET", path: "/api/v2/team//workflow/query", wantErr: ErrNotFound},
		{name: "relative path", method: "GET", path: "api/v2/team", wantErr: ErrNotFound},
		{name: "empty path", method: "GET", path: "", wantErr: ErrNotFound},
		{name: "root", method: "GET", path: "/", wantErr: ErrNotFound},

		// Compatibility paths.
		{name: "user profile", method: "GET", path: "/api/v2/user/profile",
			wantPattern: "/api/v2/user/profile", wantService: Identity, wantUpPath: "/api/v2/profile"},
		{name: "user profile patch", method: "PATCH", path: "/api/v2/user/profile",
			wantPattern: "/api/v2/user/profile", wantService: Identity, wantUpMethod: "PATCH", wantUpPath: "/api/v2/profile"},
		{name: "a user named profile can still be deleted", method: "DELETE", path: "/api/v2/user/profile",
			wantPattern: "/api/v2/user/{userId}", wantService: Identity, wantUpPath: "/api/v2/user/profile"},
		{name: "global params list", method: "GET", path: "/api/v2/global-params",
			wantPattern: "/api/v2/global-params", wantService: Identity, wantUpPath: "/api/v2/parameters"},
		{name: "global params create", method: "POST", path: "/api/v2/global-params",
			wantPattern: "/api/v2/global-params", wantService: Identity, wantUpMethod: "POST", wantUpPath: "/api/v2/parameters"},
		{name: "global params patch becomes put", method: "PATCH", path: "/api/v2/global-params/token",
			wantPattern: "/api/v2/global-params/{name}", wantService: Identity, wantUpMethod: "PUT", wantUpPath: "/api/v2/parameters"},
		{name: "global params delete", method: "DELETE", path: "/api/v2/global-params/to%20ken",
			wantPattern: "/api/v2/global-params/{name}", wantService: Identity, wantUpMethod: "DELETE", wantUpPath: "/api/v2/parameters/to%20ken"},
		{name: "export outside a team", method: "GET", path: "/api/v2/workflow/build/export",
			wantPattern: "/api/v2/workflow/{name}/export", wantService: Workflows, wantUpPath: "/api/v2/workflow/build/export"},
		{name: "validate cron outside a team", method: "GET", path: "/api/v2/schedule/validate-cron",
			wantPattern: "/api/v2/schedule/validate-cron", wantService: Schedules, wantUpPath: "/api/v2/schedule/validate-cron"},
		{name: "github installation landing", method: "GET", path: "/api/v2/integration/github/installation",
			wantPattern: "/api/v2/integration/github/installation", wantService: Integrations, wantOpen: true,
			wantUpPath: "/api/v2/integration/codehost/installation"},
		{name: "github link", method: "POST", path: "/api/v2/integration/github/link",
			wantPattern: "/api/v2/integration/github/link", wantService: Integrations, wantUpPath: "/api/v2/integration/codehost/link"},
		{name: "github unlink", method: "POST", path: "/api/v2/integration/github/unlink",
			wantPattern: "/api/v2/integration/github/unlink", wantService: Integrations, wantUpPath: "/api/v2/integration/codehost/unlink"},
		{name: "approver group by id", method: "DELETE", path: "/api/v2/team/infra/approvers/g1",
			wantPattern: "/api/v2/team/{team}/approvers/{groupId}", wantService: Identity,
			wantParams: map[string]string{"team": "infra", "groupId": "g1"}, wantUpPath: "/api/v2/team/infra/approvers/g1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, p, err := table.Match(tt.method, tt.path)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				assert.Nil(t, r)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantPattern, r.Pattern)
			assert.Equal(t, tt.wantService, r.Service)
			assert.Equal(t, tt.wantOpen, r.Open, "open")
			assert.Equal(t, tt.wantQueryToken, r.QueryToken, "query token")
			for name, v := range tt.wantParams {
				assert.Equal(t, v, p.Get(name), "parameter %s", name)
			}
			if tt.wantUpMethod != "" {
				assert.Equal(t, tt.wantUpMethod, r.UpstreamMethod(tt.method))
			}
			if tt.wantUpPath != "" {
				assert.Equal(t, tt.wantUpPath, string(r.AppendUpstreamPath(nil, tt.path, &p)))
			}
		})
	}
}

func TestRouteAttributes(t *testing.T) {
	t.Parallel()
	large := map[endpoint]bool{
		{"PUT", "/api/v2/team/{team}/workflow/{name}/compose"}: true,
		{"PUT", "/api/v2/team/{team}/workflow"}:                true,
		{"POST", "/api/v2/team/{team}/workflow"}:               true,
		{"PUT", "/api/v2/workflowtemplate"}:                    true,
		{"POST", "/api/v2/workflowtemplate"}:                   true,
	}
	open := map[endpoint]bool{
		{"PUT", "/api/v2/activate"}:                          true,
		{"GET", "/api/v2/integration/codehost/installation"}: true,
		{"GET", "/api/v2/integration/github/installation"}:   true,
		{"GET", "/api/v2/integration/chat/install"}:          true,
		{"GET", "/api/v2/integration/chat/auth"}:             true,
		{"POST", "/api/v2/integration/chat/commands"}:        true,
		{"POST", "/api/v2/integration/chat/events"}:          true,
		{"POST", "/api/v2/integration/chat/interactivity"}:   true,
		{"POST", "/api/v2/webhook"}:                          true,
	}
	queryToken := map[endpoint]bool{
		{"POST", "/api/v2/webhook"}:  true,
		{"POST", "/api/v2/event"}:    true,
		{"POST", "/api/v2/callback"}: true,
		{"GET", "/api/v2/callback"}:  true,
	}
	routes := Default().Routes()
	assert.Len(t, routes, 115)
	for _, r := range routes {
		e := endpoint{r.Method, r.Pattern}
		t.Run(r.Method+" "+r.Pattern, func(t *testing.T) {
			wantLimit := httpx.DefaultBodyLimit
			if large[e] {
				wantLimit = httpx.LargeBodyLimit
			}
			assert.Equal(t, wantLimit, r.BodyLimit, "body limit")
			assert.Equal(t, open[e], r.Open, "open")
			assert.Equal(t, queryToken[e], r.QueryToken, "query token")
			watch := e == endpoint{"GET", "/api/v2/team/{team}/workflowrun/{workflowRunId}/watch"} ||
				e == endpoint{"GET", "/api/v2/team/{team}/workflowrun/watch"}
			assert.Equal(t, e == endpoint{"GET", "/api/v2/taskrun/{taskRunId}/log"} || watch, r.Streaming, "streaming")
			assert.Equal(t, watch, r.Feed, "feed")
		})
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	table := Default()
	tests := []struct {
		path string
		want []string
	}{
		{"/api/v2/team/infra", []string{"GET", "HEAD", "PATCH", "DELETE"}},
		{"/api/v2/team/query", []string{"GET", "HEAD", "PATCH", "DELETE"}},
		{"/api/v2/parameters/", []string{"GET", "HEAD", "POST", "PUT"}},
		{"/api/v2/nope", nil},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, table.Allowed(tt.path))
		})
	}
}

func TestNewRejectsBrokenTables(t *testing.T) {
	t.Parallel()
	ok := Route{Method: "GET", Pattern: "/api/v2/a/{x}", Service: "s", Access: Authenticated}
	with := func(f func(*Route)) []Route {
		r := ok
		f(&r)
		return []Route{r}
	}
	tests := []struct {
		name   string
		routes []Route
		want   string
	}{
		{"duplicate", []Route{ok, ok}, "declared twice"},
		{"unknown method", with(func(r *Route) { r.Method = "get" }), "unknown method"},
		{"no service", with(func(r *Route) { r.Service = "" }), "no service"},
		{"trailing slash", with(func(r *Route) { r.Pattern = "/api/v2/a/" }), "must start with /"},
		{"relative", with(func(r *Route) { r.Pattern = "api/v2" }), "must start with /"},
		{"empty segment", with(func(r *Route) { r.Pattern = "/api//a" }), "empty segment"},
		{"malformed parameter", with(func(r *Route) { r.Pattern = "/api/{x" }), "malformed parameter"},
		{"repeated parameter", with(func(r *Route) { r.Pattern = "/api/{x}/{x}" }), "repeated"},
		{"too many parameters", with(func(r *Route) { r.Pattern = "/{a}/{b}/{c}/{d}/{e}" }), "more than 4"},
		{"rewrite of unknown parameter", with(func(r *Route) { r.RewritePath = "/api/{y}" }), "lacks"},
		{"unknown rewrite method", with(func(r *Route) { r.RewriteMethod = "FETCH" }), "unknown rewrite method"},
		{"negative body limit", with(func(r *Route) { r.BodyLimit = -1 }), "negative body limit"},
		{"no authorization decision", with(func(r *Route) { r.Access = Check }), "no authorization decision"},
		{"unknown resource", with(func(r *Route) { r.Access, r.Resource, r.Action = Check, "spaceship", "read" }), "unknown resource"},
		{"wildcard resource", with(func(r *Route) { r.Access, r.Resource, r.Action = Check, "**", "read" }), "unknown resource"},
		{"unknown action", with(func(r *Route) { r.Access, r.Resource, r.Action = Check, "workflow", "fly" }), "unknown action"},
		{"no action", with(func(r *Route) { r.Access, r.Resource = Check, "workflow" }), "unknown action"},
		{"resource on a service-decided route", with(func(r *Route) { r.Access, r.Resource = ServiceDecides, "workflow" }), "checks nothing"},
		{"unknown access", with(func(r *Route) { r.Access = 9 }), "unknown access"},
		{"open with a rule", with(func(r *Route) { r.Open, r.Access = true, ServiceDecides }), "open routes"},
		{"run tokens on a route the gateway checks", with(func(r *Route) { r.RunCallback = true }), "run tokens"},
		{"run tokens on an open route", with(func(r *Route) { r.Access, r.Open, r.RunCallback = Check, true, true }), "run tokens"},
		{"workflow scope without a team", with(func(r *Route) {
			r.Access, r.Resource, r.Action, r.Workflow, r.Pattern = Check, "workflow", "read", true, "/api/v2/a/{name}"
		}), "needs {team} and {name}"},
		{"run scope without a team", with(func(r *Route) { r.Access, r.Resource, r.Action, r.InWorkflow = Check, "workflowrun", "read", true }), "needs {team}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.routes)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	table := Default()
	paths := []string{
		"/api/v2/team/infra/workflow/build/submit",
		"/api/v2/team/query/workflow/query",
		"/api/v2/user/profile",
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, p := range paths {
			r, params, err := table.Match("GET", p)
			if r == nil && !errors.Is(err, ErrMethodNotAllowed) {
				panic(p)
			}
			_ = params
		}
	})
	assert.Zero(t, allocs)
}

func BenchmarkMatch(b *testing.B) {
	table := Default()
	paths := []string{
		"/api/v2/team/infra/workflow/build/submit",
		"/api/v2/team/infra/workflowrun/65a1b2c3d4e5f60718293a4b",
		"/api/v2/team/query",
		"/api/v2/taskrun/65a1b2c3d4e5f60718293a4b/log",
	}
	methods := []string{"POST", "GET", "GET", "GET"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		j := i % len(paths)
		if _, _, err := table.Match(methods[j], paths[j]); err != nil {
			b.Fatal(err)
		}
	}
}

// The declared table must list each method and pattern once; New enforces it, and this
// keeps a broken declaration from hiding behind Default's panic.
func TestDeclaredTableCompiles(t *testing.T) {
	t.Parallel()
	_, err := New(declared)
	require.NoError(t, err)
	seen := map[endpoint]bool{}
	for _, r := range declared {
		e := endpoint{r.Method, r.Pattern}
		require.False(t, seen[e], "%v declared twice", e)
		seen[e] = true
	}
}
