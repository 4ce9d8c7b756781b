package openapi

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/routes"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
)

// load parses the embedded document with kin-openapi, a parser independent of the one the
// page uses, resolving every reference.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(Document())
	require.NoError(t, err)
	return doc
}

// op is one operation of the document.
type op struct {
	method, path string
	item         *openapi3.PathItem
	*openapi3.Operation
}

func operations(doc *openapi3.T) []op {
	var out []op
	for path, item := range doc.Paths.Map() {
		for method, o := range item.Operations() {
			out = append(out, op{method: method, path: path, item: item, Operation: o})
		}
	}
	slices.SortFunc(out, func(a, b op) int { return strings.Compare(a.method+" "+a.path, b.method+" "+b.path) })
	return out
}

// declared indexes the routing table by method and pattern.
func declared() map[string]routes.Route {
	out := map[string]routes.Route{}
	for _, r := range routes.Declared() {
		out[r.Method+" "+r.Pattern] = r
	}
	return out
}

func (o op) key() string { return o.method + " " + o.path }

func (o op) servedByGateway() bool { return o.Extensions["x-served-by"] == ServedBy }

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	doc := load(t)
	assert.True(t, doc.IsOpenAPI31OrLater(), "openapi: %s", doc.OpenAPI)
	err := doc.Validate(context.Background(),
		openapi3.EnableMultiError(),
		openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaDefaultsValidation(),
		openapi3.EnableSchemaPatternValidation(),
	)
	require.NoError(t, err)

	// The page's own parser reads it too.
	_, err = parse(Document())
	require.NoError(t, err)
}

func TestEveryRouteIsDocumented(t *testing.T) {
	t.Parallel()
	doc := load(t)
	table := declared()

	documented := map[string]bool{}
	for _, o := range operations(doc) {
		documented[o.key()] = true
		if o.servedByGateway() {
			assert.NotContains(t, table, o.key(), "the gateway's own %s is not proxied, so not in the table", o.key())
			assert.Contains(t, []string{SpecPath, DocsPath, AuthConfigPath}, o.path)
			continue
		}
		_, ok := table[o.key()]
		assert.Truef(t, ok, "%s is documented but not in the routing table", o.key())
	}
	for key := range table {
		assert.Truef(t, documented[key], "%s is routed but not documented", key)
	}
	assert.True(t, documented["GET "+SpecPath])
	assert.True(t, documented["GET "+DocsPath])
	assert.True(t, documented["GET "+AuthConfigPath])
}

func TestCompatibilityPathsAreDeprecated(t *testing.T) {
	t.Parallel()
	doc := load(t)
	table := declared()
	for _, o := range operations(doc) {
		if o.servedByGateway() {
			assert.False(t, o.Deprecated, o.key())
			continue
		}
		r := table[o.key()]
		t.Run(o.key(), func(t *testing.T) {
			require.Equal(t, r.Deprecated, o.Deprecated)
			mapsTo, _ := o.Extensions["x-maps-to"].(string)
			if !r.Deprecated {
				assert.Empty(t, mapsTo)
				return
			}
			// x-maps-to names the seed endpoint answering the path, which the description names too.
			target, ok := table[mapsTo]
			require.Truef(t, ok, "x-maps-to %q is not a route", mapsTo)
			assert.False(t, target.Deprecated, "x-maps-to %q must be a seed endpoint", mapsTo)
			_, targetPath, _ := strings.Cut(mapsTo, " ")
			assert.Contains(t, o.Description, targetPath)
			if r.RewritePath != "" {
				assert.Equal(t, r.UpstreamMethod(r.Method)+" "+r.RewritePath, mapsTo, "the gateway rewrites to another endpoint")
			}
		})
	}
}

// requirements returns an operation's security requirements in force.
func requirements(doc *openapi3.T, o op) openapi3.SecurityRequirements {
	if o.Security != nil {
		return *o.Security
	}
	return doc.Security
}

func TestSecurityMatchesTheRoutingTable(t *testing.T) {
	t.Parallel()
	doc := load(t)
	table := declared()
	for _, o := range operations(doc) {
		t.Run(o.key(), func(t *testing.T) {
			reqs := requirements(doc, o)
			open := len(reqs) == 0 || slices.ContainsFunc(reqs, func(r openapi3.SecurityRequirement) bool { return len(r) == 0 })
			query := slices.ContainsFunc(reqs, func(r openapi3.SecurityRequirement) bool { _, ok := r["accessTokenQuery"]; return ok })
			if o.servedByGateway() {
				assert.Empty(t, reqs, "the documentation is open: security: []")
				return
			}
			r := table[o.key()]
			assert.Equal(t, r.Open, open, "open")
			assert.Equal(t, r.QueryToken, query, "access_token in the query")
			if !r.Open || r.QueryToken {
				// Every route that takes credentials takes both headers.
				for _, scheme := range []string{"bearerAuth", "accessToken"} {
					assert.True(t, slices.ContainsFunc(reqs, func(req openapi3.SecurityRequirement) bool { _, ok := req[scheme]; return ok }), scheme)
				}
			}
		})
	}
}

// responseRef returns the component a response of o refers to ("" for an inline one).
func responseRef(o op, status string) (string, bool) {
	r := o.Responses.Value(status)
	if r == nil {
		return "", false
	}
	return r.Ref, true
}

func TestResponsesFollowTheContract(t *testing.T) {
	t.Parallel()
	doc := load(t)
	table := declared()
	for _, o := range operations(doc) {
		t.Run(o.key(), func(t *testing.T) {
			r, inTable := table[o.key()]
			want := []string{"429", "default"}
			if inTable {
				// Credentials a request carries are checked even on open routes, and every
				// proxied request can meet a service that is down.
				want = append(want, "401", "503")
				if !r.Open {
					want = append(want, "403", "423")
				}
			}
			for _, status := range want {
				_, ok := responseRef(o, status)
				assert.Truef(t, ok, "no %s answer", status)
			}

			// A body is limited (413, by the route's limit) and typed (415).
			if o.RequestBody != nil {
				ref, ok := responseRef(o, "413")
				require.True(t, ok, "a body can be too large")
				wantRef := "#/components/responses/PayloadTooLarge"
				if r.BodyLimit == httpx.LargeBodyLimit {
					wantRef = "#/components/responses/PayloadTooLarge16MiB"
				}
				assert.Equal(t, wantRef, ref)
				_, ok = responseRef(o, "415")
				assert.True(t, ok, "a body can have the wrong type")
			} else {
				_, ok := responseRef(o, "413")
				assert.False(t, ok, "413 without a body")
			}

			// Creates answer 201 with Location (API.md §1).
			if created := o.Responses.Value("201"); created != nil {
				assert.Contains(t, created.Value.Headers, "Location")
			}
			// Deletes answer 204, except revoking a token and cancelling a run, which answer
			// the resource.
			if o.method == http.MethodDelete {
				status := "204"
				if o.path == "/api/v2/token/{id}" || strings.HasSuffix(o.path, "/cancel") {
					status = "200"
				}
				assert.NotNil(t, o.Responses.Value(status), "DELETE answers %s", status)
			}

			// Every error answer is the ErrorBody.
			for status, resp := range o.Responses.Map() {
				if status != "default" && status < "400" {
					continue
				}
				media := resp.Value.Content.Get("application/json")
				require.NotNil(t, media, "%s is JSON", status)
				assert.Equal(t, "#/components/schemas/ErrorBody", media.Schema.Ref, "%s answers the ErrorBody", status)
			}
		})
	}
}

// parameters returns o's parameters, the path item's first.
func parameters(o op) openapi3.Parameters {
	return append(slices.Clone(o.item.Parameters), o.Parameters...)
}

func TestSearchesArePaged(t *testing.T) {
	t.Parallel()
	doc := load(t)
	for _, o := range operations(doc) {
		if !strings.HasSuffix(o.path, "/query") {
			continue
		}
		t.Run(o.key(), func(t *testing.T) {
			params := map[string]*openapi3.Schema{}
			for _, p := range parameters(o) {
				params[p.Value.Name] = p.Value.Schema.Value
			}
			limit, page := params["limit"], params["page"]
			require.NotNil(t, limit, "limit")
			require.NotNil(t, page, "page")

			wantDefault := 1000.0
			if strings.Contains(o.path, "/action/") || strings.Contains(o.path, "/schedule/") {
				wantDefault = 10 // as the seed says
			}
			assert.InDelta(t, wantDefault, limit.Default, 0)
			require.NotNil(t, limit.Min)
			require.NotNil(t, limit.Max)
			assert.InDelta(t, 1, *limit.Min, 0)
			assert.InDelta(t, 1000, *limit.Max, 0)
			assert.InDelta(t, 0, page.Default, 0)
			require.NotNil(t, page.Min)
			assert.InDelta(t, 0, *page.Min, 0)

			// The answer is the page envelope.
			body := o.Responses.Value("200").Value.Content.Get("application/json").Schema.Value
			require.NotEmpty(t, body.AllOf)
			assert.Equal(t, "#/components/schemas/Page", body.AllOf[0].Ref)
		})
	}
}

func TestErrorCatalogueMatchesApperr(t *testing.T) {
	t.Parallel()
	doc, err := parse(Document())
	require.NoError(t, err)
	var want []catalogueEntry
	var names []any
	for _, r := range apperr.Catalogue {
		want = append(want, catalogueEntry{Reason: r.Name, Code: r.Code, Status: r.Kind.HTTPStatus()})
		names = append(names, r.Name)
	}
	assert.Equal(t, want, doc.Catalogue, "x-error-catalogue")

	kin := load(t)
	reason := kin.Components.Schemas["ErrorReason"]
	require.NotNil(t, reason)
	assert.Equal(t, names, reason.Value.Enum, "the ErrorBody's reason enum")
	body := kin.Components.Schemas["ErrorBody"].Value
	assert.Equal(t, "#/components/schemas/ErrorReason", body.Properties["reason"].Ref)
}

func TestTheContractsSchemasAreDefined(t *testing.T) {
	t.Parallel()
	doc := load(t)
	// API.md §3, with the seed's names for the page envelopes.
	for _, name := range []string{
		"Workflow", "WorkflowTask", "WorkflowCanvas", "AbstractParam", "Task", "PipelineTask",
		"WorkflowRun", "WorkflowSubmitRequest", "WorkflowRunRequest", "TaskRun", "WorkflowTemplate",
		"WorkflowSchedule", "Action", "ActionSummary", "Team", "TeamRequest", "TeamNameCheckRequest",
		"Quotas", "User", "UserRequest", "UserProfile", "Token", "TokenCreateRequest",
		"TokenCreateResponse", "Setting", "Features", "HeaderNavigationResponse", "Navigation",
		"WorkflowRunInsight", "WorkflowRunCount", "CronValidationResponse", "CodeHostLinkRequest",
		"OneTimeCode", "ErrorBody", "Page", "WorkflowResponsePage", "WorkflowRunResponsePage",
		"TaskResponsePage", "WorkflowTemplateResponsePage", "PageWorkflowSchedule", "PageAction",
		"PageTeam", "PageUser", "PageToken",
	} {
		assert.Contains(t, doc.Components.Schemas, name)
	}
}

func TestOperationsAreNamedAndTagged(t *testing.T) {
	t.Parallel()
	doc := load(t)
	var tags []string
	for _, tag := range doc.Tags {
		tags = append(tags, tag.Name)
	}
	ids := map[string]string{}
	for _, o := range operations(doc) {
		require.NotEmpty(t, o.OperationID, o.key())
		assert.NotContains(t, ids, o.OperationID, "%s and %s", o.key(), ids[o.OperationID])
		ids[o.OperationID] = o.key()
		assert.NotEmpty(t, o.Summary, o.key())
		require.Len(t, o.Tags, 1, o.key())
		assert.Contains(t, tags, o.Tags[0], o.key())
	}
}
