package client

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
)

// Tasks of the catalogue can be read and written as JSON (Task) or as Tekton Task YAML
// (the ...YAML methods, `application/x-yaml`).

const yamlType = "application/x-yaml"

// errNoTeam is the error of a team's catalogue method called without a team: the paths
// of the global catalogue are those without one.
var errNoTeam = errors.New("client: no team given")

// TaskQuery filters a search of tasks; the zero value lists them all.
type TaskQuery struct {
	Labels   map[string]string
	Statuses []string // active, inactive
	Names    []string
	// Teams, for SearchTasks only: search these teams' tasks (the caller's) instead of
	// the global ones.
	Teams []string
	Sort  string // direction on creationDate: ASC (default) or DESC
	Page  int
	Limit int // 1 to 1000 (default 1000)
}

func (q TaskQuery) values() query {
	return newQuery().labels(q.Labels).list("statuses", q.Statuses).list("names", q.Names).
		list("teams", q.Teams).str("sort", q.Sort).page(q.Page, q.Limit)
}

// taskPath is the path of the global catalogue (team "") or of team's.
func taskPath(team string, rest ...string) string {
	if team == "" {
		return p(append([]string{"task"}, rest...)...)
	}
	return p(append([]string{"team", team, "task"}, rest...)...)
}

func (c *Client) createTask(ctx context.Context, team string, t *Task) (*Task, error) {
	var out Task
	_, err := c.call(ctx, http.MethodPost, taskPath(team), nil, t, &out)
	return ret(&out, err)
}

func (c *Client) taskYAML(ctx context.Context, method, team, name string, q query, doc []byte) ([]byte, error) {
	r := request{method: method, accept: yamlType, query: q.values()}
	if name == "" {
		r.path = taskPath(team)
	} else {
		r.path = taskPath(team, name)
	}
	if doc != nil {
		r.body, r.contentType = bytesReader(doc), yamlType
	}
	return c.raw(ctx, r)
}

func (c *Client) validateTask(ctx context.Context, team string, doc []byte) error {
	_, err := c.raw(ctx, request{method: http.MethodPost, path: taskPath(team, "validate"),
		body: bytesReader(doc), contentType: yamlType})
	return err
}

func (c *Client) getTask(ctx context.Context, team, name string, opts []ReadOption) (*Task, error) {
	var out Task
	_, err := c.call(ctx, http.MethodGet, taskPath(team, name), readQuery(opts).values(), nil, &out)
	return ret(&out, err)
}

func (c *Client) saveTask(ctx context.Context, team, name string, t *Task, replace bool) (*Task, error) {
	var out Task
	_, err := c.call(ctx, http.MethodPut, taskPath(team, name), replaceQuery(replace).values(), t, &out)
	return ret(&out, err)
}

func (c *Client) taskChangelog(ctx context.Context, team, name string) ([]ChangelogEntry, error) {
	var out []ChangelogEntry
	_, err := c.call(ctx, http.MethodGet, taskPath(team, name, "changelog"), nil, nil, &out)
	return out, err
}

// CreateTeamTask creates a task in team's catalogue. createTeamTask.
func (c *Client) CreateTeamTask(ctx context.Context, team string, t *Task) (*Task, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.createTask(ctx, team, t)
}

// CreateTeamTaskYAML creates a task in team's catalogue from a Tekton Task document and
// answers it as one. createTeamTask.
func (c *Client) CreateTeamTaskYAML(ctx context.Context, team string, doc []byte) ([]byte, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.taskYAML(ctx, http.MethodPost, team, "", newQuery(), doc)
}

// QueryTeamTasks reads one page of team's tasks. queryTeamTasks.
func (c *Client) QueryTeamTasks(ctx context.Context, team string, q TaskQuery) (*Page[Task], error) {
	if team == "" {
		return nil, errNoTeam
	}
	q.Teams = nil
	var out Page[Task]
	_, err := c.call(ctx, http.MethodGet, taskPath(team, "query"), q.values().values(), nil, &out)
	return ret(&out, err)
}

// TeamTasks yields every task of team's catalogue matching q.
func (c *Client) TeamTasks(ctx context.Context, team string, q TaskQuery) iter.Seq2[Task, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Task], error) {
		q.Page = page
		return c.QueryTeamTasks(ctx, team, q)
	})
}

// ValidateTeamTask checks a Tekton Task document as team's catalogue would take it; nil
// when valid. validateTeamTask.
func (c *Client) ValidateTeamTask(ctx context.Context, team string, doc []byte) error {
	if team == "" {
		return errNoTeam
	}
	return c.validateTask(ctx, team, doc)
}

// GetTeamTask reads a task of team's catalogue. getTeamTask.
func (c *Client) GetTeamTask(ctx context.Context, team, name string, opts ...ReadOption) (*Task, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.getTask(ctx, team, name, opts)
}

// GetTeamTaskYAML reads a task of team's catalogue as a Tekton Task document. getTeamTask.
func (c *Client) GetTeamTaskYAML(ctx context.Context, team, name string, opts ...ReadOption) ([]byte, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.taskYAML(ctx, http.MethodGet, team, name, readQuery(opts), nil)
}

// SaveTeamTask adds a version of a task of team's catalogue, or creates it; with replace
// it overwrites the latest version. saveTeamTask.
func (c *Client) SaveTeamTask(ctx context.Context, team, name string, t *Task, replace bool) (*Task, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.saveTask(ctx, team, name, t, replace)
}

// SaveTeamTaskYAML is SaveTeamTask of a Tekton Task document. saveTeamTask.
func (c *Client) SaveTeamTaskYAML(ctx context.Context, team, name string, doc []byte, replace bool) ([]byte, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.taskYAML(ctx, http.MethodPut, team, name, replaceQuery(replace), doc)
}

// DeleteTeamTask deletes a task of team's catalogue (409 TASK_IN_USE while the latest
// version of a workflow uses it). deleteTeamTask.
func (c *Client) DeleteTeamTask(ctx context.Context, team, name string) error {
	if team == "" {
		return errNoTeam
	}
	_, err := c.call(ctx, http.MethodDelete, taskPath(team, name), nil, nil, nil)
	return err
}

// GetTeamTaskChangelog lists the versions of a task of team's catalogue, newest first.
// getTeamTaskChangelog.
func (c *Client) GetTeamTaskChangelog(ctx context.Context, team, name string) ([]ChangelogEntry, error) {
	if team == "" {
		return nil, errNoTeam
	}
	return c.taskChangelog(ctx, team, name)
}

// CreateGlobalTask creates a task in the global catalogue. createGlobalTask.
func (c *Client) CreateGlobalTask(ctx context.Context, t *Task) (*Task, error) {
	return c.createTask(ctx, "", t)
}

// CreateGlobalTaskYAML is CreateGlobalTask of a Tekton Task document. createGlobalTask.
func (c *Client) CreateGlobalTaskYAML(ctx context.Context, doc []byte) ([]byte, error) {
	return c.taskYAML(ctx, http.MethodPost, "", "", newQuery(), doc)
}

// QueryTasks reads one page of the global catalogue, or of q.Teams' catalogues.
// queryTasks.
func (c *Client) QueryTasks(ctx context.Context, q TaskQuery) (*Page[Task], error) {
	var out Page[Task]
	_, err := c.call(ctx, http.MethodGet, taskPath("", "query"), q.values().values(), nil, &out)
	return ret(&out, err)
}

// Tasks yields every task of the global catalogue (or of q.Teams') matching q.
func (c *Client) Tasks(ctx context.Context, q TaskQuery) iter.Seq2[Task, error] {
	return all(ctx, q.Page, func(ctx context.Context, page int) (*Page[Task], error) {
		q.Page = page
		return c.QueryTasks(ctx, q)
	})
}

// ValidateGlobalTask checks a Tekton Task document; nil when valid. validateGlobalTask.
func (c *Client) ValidateGlobalTask(ctx context.Context, doc []byte) error {
	return c.validateTask(ctx, "", doc)
}

// GetGlobalTask reads a task of the global catalogue. getGlobalTask.
func (c *Client) GetGlobalTask(ctx context.Context, name string, opts ...ReadOption) (*Task, error) {
	return c.getTask(ctx, "", name, opts)
}

// GetGlobalTaskYAML reads a global task as a Tekton Task document. getGlobalTask.
func (c *Client) GetGlobalTaskYAML(ctx context.Context, name string, opts ...ReadOption) ([]byte, error) {
	return c.taskYAML(ctx, http.MethodGet, "", name, readQuery(opts), nil)
}

// SaveGlobalTask adds a version of a global task, or creates it; with replace it
// overwrites the latest version. saveGlobalTask.
func (c *Client) SaveGlobalTask(ctx context.Context, name string, t *Task, replace bool) (*Task, error) {
	return c.saveTask(ctx, "", name, t, replace)
}

// SaveGlobalTaskYAML is SaveGlobalTask of a Tekton Task document. saveGlobalTask.
func (c *Client) SaveGlobalTaskYAML(ctx context.Context, name string, doc []byte, replace bool) ([]byte, error) {
	return c.taskYAML(ctx, http.MethodPut, "", name, replaceQuery(replace), doc)
}

// GetGlobalTaskChangelog lists a global task's versions, newest first.
// getGlobalTaskChangelog.
func (c *Client) GetGlobalTaskChangelog(ctx context.Context, name string) ([]ChangelogEntry, error) {
	return c.taskChangelog(ctx, "", name)
}

// putTaskJSON sends doc, a JSON task document, to PUT the task of its name.
func (c *Client) putTaskJSON(ctx context.Context, team, name string, doc []byte, q url.Values) (*Task, bool, error) {
	if name == "" {
		return nil, false, errors.New("client: the task document has no name")
	}
	var out Task
	status, err := c.call(ctx, http.MethodPut, taskPath(team, name), q, json.RawMessage(doc), &out)
	if err != nil {
		return nil, false, err
	}
	return &out, status == http.StatusCreated, nil
}

// ApplyTeamTaskJSON makes doc, a JSON task document named name (a file of the CLI, a task
// read back), the latest version of its task in team's catalogue, sent as it is so that
// every field of it is kept: it creates the task, adds a version, or, when the latest
// version holds doc already, writes nothing and answers that version. It answers the
// task as saved and whether it was created. saveTeamTask.
func (c *Client) ApplyTeamTaskJSON(ctx context.Context, team, name string, doc []byte) (*Task, bool, error) {
	if team == "" {
		return nil, false, errNoTeam
	}
	return c.putTaskJSON(ctx, team, name, doc, nil)
}

// DryRunTeamTaskJSON answers what ApplyTeamTaskJSON of doc would save, validated, saving
// nothing: the next version, the latest when doc changes nothing, or version 1 of a new
// task (created). saveTeamTask.
func (c *Client) DryRunTeamTaskJSON(ctx context.Context, team, name string, doc []byte) (*Task, bool, error) {
	if team == "" {
		return nil, false, errNoTeam
	}
	return c.putTaskJSON(ctx, team, name, doc, url.Values{"dryRun": {"true"}})
}

// ApplyGlobalTaskJSON is ApplyTeamTaskJSON in the global catalogue. saveGlobalTask.
func (c *Client) ApplyGlobalTaskJSON(ctx context.Context, name string, doc []byte) (*Task, bool, error) {
	return c.putTaskJSON(ctx, "", name, doc, nil)
}

// DryRunGlobalTaskJSON is DryRunTeamTaskJSON in the global catalogue. saveGlobalTask.
func (c *Client) DryRunGlobalTaskJSON(ctx context.Context, name string, doc []byte) (*Task, bool, error) {
	return c.putTaskJSON(ctx, "", name, doc, url.Values{"dryRun": {"true"}})
}
