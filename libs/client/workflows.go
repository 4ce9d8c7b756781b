package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
)

// ReadOption narrows a read: which version, with or without tasks.
type ReadOption struct{ apply func(query) }

// AtVersion reads version n instead of the latest (workflows, canvases, templates, tasks).
func AtVersion(n int) ReadOption { return ReadOption{func(q query) { q.int("version", n) }} }

// WithoutTasks leaves a workflow's, template's or run's tasks out of the answer.
func WithoutTasks() ReadOption { return ReadOption{func(q query) { q.str("withTasks", "false") }} }

func readQuery(opts []ReadOption) query {
	q := newQuery()
	for _, o := range opts {
		if o.apply != nil {
			o.apply(q)
		}
	}
	return q
}

func replaceQuery(replace bool) query {
	if replace {
		return newQuery().str("replace", "true")
	}
	return newQuery()
}

func forceQuery(force bool) query {
	if force {
		return newQuery().str("force", "true")
	}
	return newQuery()
}

// WorkflowQuery filters a search of a team's workflows; the zero value lists them all.
type WorkflowQuery struct {
	Labels    map[string]string // resources having all these pairs
	Statuses  []string          // active, inactive
	Workflows []string          // names
	Sort      string            // direction on creationDate: ASC (default) or DESC
	Page      int               // the first page to read, from 0
	Limit     int               // the page size, 1 to 1000 (default 1000)
}

func (q WorkflowQuery) values() query {
	return newQuery().labels(q.Labels).list("statuses", q.Statuses).list("workflows", q.Workflows).
		str("sort", q.Sort).page(q.Page, q.Limit)
}

// CreateWorkflow creates version 1 of a workflow in team (409 WORKFLOW_ALREADY_EXISTS when
// the name is taken). createWorkflow.
func (c *Client) CreateWorkflow(ctx context.Context, team string, w *Workflow) (*Workflow, error) {
	var out Workflow
	_, err := c.call(ctx, http.MethodPost, p("team", team, "workflow"), nil, w, &out)
	return ret(&out, err)
}

// SaveWorkflow adds a version of w.Name in team, or creates it; with replace it
// overwrites the latest version in place. It answers the saved workflow and whether it
// was created. saveWorkflow.
func (c *Client) SaveWorkflow(ctx context.Context, team string, w *Workflow, replace bool) (*Workflow, bool, error) {
	var out Workflow
	status, err := c.call(ctx, http.MethodPut, p("team", team, "workflow"), replaceQuery(replace).values(), w, &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// QueryWorkflows reads one page of team's workflows. queryWorkflows.
func (c *Client) QueryWorkflows(ctx context.Context, team string, q WorkflowQuery) (*Page[Workflow], error) {
	var out Page[Workflow]
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflow", "query"), q.values().values(), nil, &out)
	return ret(&out, err)
}

// Workflows yields every workflow of team matching q, page after page from q.Page.
func (c *Client) Workflows(ctx context.Context, team string, q WorkflowQuery) iter.Seq2[Workflow, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Workflow], error) {
		q.Page = page
		return c.QueryWorkflows(ctx, team, q)
	})
}

// GetWorkflow reads a workflow by name (or id), its latest version unless AtVersion.
// getWorkflow.
func (c *Client) GetWorkflow(ctx context.Context, team, name string, opts ...ReadOption) (*Workflow, error) {
	var out Workflow
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflow", name), readQuery(opts).values(), nil, &out)
	return ret(&out, err)
}

// DeleteWorkflow deletes a workflow; with force its runs that have not completed are
// cancelled first (else 409 WORKFLOW_HAS_ACTIVE_RUNS). deleteWorkflow.
func (c *Client) DeleteWorkflow(ctx context.Context, team, name string, force bool) error {
	_, err := c.call(ctx, http.MethodDelete, p("team", team, "workflow", name), forceQuery(force).values(), nil, nil)
	return err
}

// DuplicateWorkflow copies the latest version of a workflow under `<name>-copy` (then
// `-copy-2`, …). duplicateWorkflow.
func (c *Client) DuplicateWorkflow(ctx context.Context, team, name string) (*Workflow, error) {
	var out Workflow
	_, err := c.call(ctx, http.MethodPost, p("team", team, "workflow", name, "duplicate"), nil, nil, &out)
	return ret(&out, err)
}

// ExportWorkflow answers the latest version of a workflow as the JSON document the API
// exports, unknown fields included; CreateWorkflowJSON imports it. exportWorkflow.
func (c *Client) ExportWorkflow(ctx context.Context, team, name string) ([]byte, error) {
	return c.raw(ctx, request{method: http.MethodGet, path: p("team", team, "workflow", name, "export")})
}

// GetAvailableParameters lists the parameter references a workflow's tasks may use
// (`params.x`, `tasks.<task>.results.<r>`…), without `$()`. getAvailableParameters.
func (c *Client) GetAvailableParameters(ctx context.Context, team, name string) ([]string, error) {
	var out []string
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflow", name, "available-parameters"), nil, nil, &out)
	return out, err
}

// GetWorkflowChangelog lists a workflow's versions, newest first. getWorkflowChangelog.
func (c *Client) GetWorkflowChangelog(ctx context.Context, team, name string) ([]ChangelogEntry, error) {
	var out []ChangelogEntry
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflow", name, "changelog"), nil, nil, &out)
	return out, err
}

// GetWorkflowCanvas reads a workflow as the designer's canvas. getWorkflowCanvas.
func (c *Client) GetWorkflowCanvas(ctx context.Context, team, name string, opts ...ReadOption) (*WorkflowCanvas, error) {
	var out WorkflowCanvas
	_, err := c.call(ctx, http.MethodGet, p("team", team, "workflow", name, "compose"), readQuery(opts).values(), nil, &out)
	return ret(&out, err)
}

// SaveWorkflowCanvas saves a canvas as a new version of workflow name (or creates it);
// with replace it overwrites the latest version. saveWorkflowCanvas.
func (c *Client) SaveWorkflowCanvas(ctx context.Context, team, name string, canvas *WorkflowCanvas, replace bool) (*WorkflowCanvas, error) {
	var out WorkflowCanvas
	_, err := c.call(ctx, http.MethodPut, p("team", team, "workflow", name, "compose"), replaceQuery(replace).values(), canvas, &out)
	return ret(&out, err)
}

// ApplyWorkflow makes w the latest version of its workflow in team: it creates the
// workflow, or adds w as its next version (runs keep the version they ran). It answers the
// workflow as saved and whether it was created. Fields that are the server's (version,
// creationDate, changelog, team, id) are ignored, so a workflow read back can be applied
// again. To keep fields this package does not declare (designers' extras), apply the JSON
// document itself with ApplyWorkflowJSON.
func (c *Client) ApplyWorkflow(ctx context.Context, team string, w *Workflow) (*Workflow, bool, error) {
	return c.SaveWorkflow(ctx, team, w, false)
}

// ApplyWorkflowJSON is ApplyWorkflow of a JSON workflow document (an export, a file of
// the CLI), sent as it is so that every field of it is kept.
func (c *Client) ApplyWorkflowJSON(ctx context.Context, team string, doc []byte) (*Workflow, bool, error) {
	var out Workflow
	status, err := c.call(ctx, http.MethodPut, p("team", team, "workflow"), nil, json.RawMessage(doc), &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// CreateWorkflowJSON creates a workflow from a JSON document (an export), sent as it is;
// its read-only fields are ignored. createWorkflow.
func (c *Client) CreateWorkflowJSON(ctx context.Context, team string, doc []byte) (*Workflow, error) {
	var out Workflow
	_, err := c.call(ctx, http.MethodPost, p("team", team, "workflow"), nil, json.RawMessage(doc), &out)
	return ret(&out, err)
}

// ret answers v, or nil with err.
func ret[T any](v *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return v, nil
}

// DryRunWorkflowJSON answers what ApplyWorkflowJSON of doc would save in team, validated,
// saving nothing: the next version, the latest when doc changes nothing, or version 1 of
// a new workflow (created).
func (c *Client) DryRunWorkflowJSON(ctx context.Context, team string, doc []byte) (*Workflow, bool, error) {
	var out Workflow
	status, err := c.call(ctx, http.MethodPut, p("team", team, "workflow"), url.Values{"dryRun": {"true"}}, json.RawMessage(doc), &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}
