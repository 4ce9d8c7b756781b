package client

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
)

// TemplateQuery filters a search of workflow templates; the zero value lists them all.
type TemplateQuery struct {
	Labels map[string]string
	Names  []string
	Sort   string // direction on creationDate: ASC (default) or DESC
	Page   int
	Limit  int // 1 to 1000 (default 1000)
}

// CreateWorkflowTemplate creates a workflow template. createWorkflowTemplate.
func (c *Client) CreateWorkflowTemplate(ctx context.Context, t *WorkflowTemplate) (*WorkflowTemplate, error) {
	var out WorkflowTemplate
	_, err := c.call(ctx, http.MethodPost, p("workflowtemplate"), nil, t, &out)
	return ret(&out, err)
}

// SaveWorkflowTemplate adds a version of template t.Name, or creates it; with replace it
// overwrites the latest version. saveWorkflowTemplate.
func (c *Client) SaveWorkflowTemplate(ctx context.Context, t *WorkflowTemplate, replace bool) (*WorkflowTemplate, error) {
	var out WorkflowTemplate
	_, err := c.call(ctx, http.MethodPut, p("workflowtemplate"), replaceQuery(replace).values(), t, &out)
	return ret(&out, err)
}

// QueryWorkflowTemplates reads one page of the workflow templates.
// queryWorkflowTemplates.
func (c *Client) QueryWorkflowTemplates(ctx context.Context, q TemplateQuery) (*Page[WorkflowTemplate], error) {
	v := newQuery().labels(q.Labels).list("names", q.Names).str("sort", q.Sort).page(q.Page, q.Limit)
	var out Page[WorkflowTemplate]
	_, err := c.call(ctx, http.MethodGet, p("workflowtemplate", "query"), v.values(), nil, &out)
	return ret(&out, err)
}

// WorkflowTemplates yields every workflow template matching q.
func (c *Client) WorkflowTemplates(ctx context.Context, q TemplateQuery) iter.Seq2[WorkflowTemplate, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[WorkflowTemplate], error) {
		q.Page = page
		return c.QueryWorkflowTemplates(ctx, q)
	})
}

// GetWorkflowTemplate reads a workflow template. getWorkflowTemplate.
func (c *Client) GetWorkflowTemplate(ctx context.Context, name string, opts ...ReadOption) (*WorkflowTemplate, error) {
	var out WorkflowTemplate
	_, err := c.call(ctx, http.MethodGet, p("workflowtemplate", name), readQuery(opts).values(), nil, &out)
	return ret(&out, err)
}

// DeleteWorkflowTemplate deletes a workflow template. deleteWorkflowTemplate.
func (c *Client) DeleteWorkflowTemplate(ctx context.Context, name string) error {
	_, err := c.call(ctx, http.MethodDelete, p("workflowtemplate", name), nil, nil, nil)
	return err
}

// ApplyWorkflowTemplateJSON makes the JSON template doc the latest version of its
// template, sent as it is: it creates the template, adds a version, or, when doc is the
// latest version already, saves nothing. It answers the template as saved and whether it
// was created.
func (c *Client) ApplyWorkflowTemplateJSON(ctx context.Context, doc []byte) (*WorkflowTemplate, bool, error) {
	return c.putTemplateJSON(ctx, doc, nil)
}

// DryRunWorkflowTemplateJSON answers what ApplyWorkflowTemplateJSON of doc would save,
// saving nothing.
func (c *Client) DryRunWorkflowTemplateJSON(ctx context.Context, doc []byte) (*WorkflowTemplate, bool, error) {
	return c.putTemplateJSON(ctx, doc, url.Values{"dryRun": {"true"}})
}

func (c *Client) putTemplateJSON(ctx context.Context, doc []byte, q url.Values) (*WorkflowTemplate, bool, error) {
	var out WorkflowTemplate
	status, err := c.call(ctx, http.MethodPut, p("workflowtemplate"), q, json.RawMessage(doc), &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}
