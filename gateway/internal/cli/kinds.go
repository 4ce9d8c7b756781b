package cli

import (
	"context"
	"fmt"
	"io"
	"iter"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// kind is a kind of resource the get, describe and delete commands know.
type kind struct {
	name    string // singular, as typed and printed
	aliases []string
	// team: the kind lives in a team (workflows, runs, schedules); else it is global.
	team     bool
	list     func(ctx context.Context, s *session, team string, limit int, p *printer.Printer, w io.Writer) error
	get      func(ctx context.Context, s *session, team, name string, p *printer.Printer, w io.Writer) error
	describe func(ctx context.Context, s *session, team, name string, p *printer.Printer, w io.Writer) error
	del      func(ctx context.Context, s *session, team, name string, force bool) error
	// names lists what NAME may be, for completion.
	names func(ctx context.Context, s *session, team string) ([]string, error)
}

// spec describes a kind of T; makeKind turns it into a kind.
type spec[T any] struct {
	name    string
	aliases []string
	team    bool
	cols    []printer.Column[T]
	all     func(ctx context.Context, c *client.Client, team string) iter.Seq2[T, error]
	one     func(ctx context.Context, c *client.Client, team, name string) (*T, error)
	fields  func(p *printer.Printer, v *T) [][2]string
	del     func(ctx context.Context, c *client.Client, team, name string, force bool) error
	key     func(v T) string
}

func makeKind[T any](sp spec[T]) kind {
	return kind{
		name: sp.name, aliases: sp.aliases, team: sp.team,
		list: func(ctx context.Context, s *session, team string, limit int, p *printer.Printer, w io.Writer) error {
			rows := []T{}
			for v, err := range sp.all(ctx, s.client, team) {
				if err != nil {
					return err
				}
				rows = append(rows, v)
				if limit > 0 && len(rows) >= limit {
					break
				}
			}
			return printer.Print(w, p, rows, rows, sp.cols)
		},
		get: func(ctx context.Context, s *session, team, name string, p *printer.Printer, w io.Writer) error {
			v, err := sp.one(ctx, s.client, team, name)
			if err != nil {
				return err
			}
			return printer.Print(w, p, v, []T{*v}, sp.cols)
		},
		describe: func(ctx context.Context, s *session, team, name string, p *printer.Printer, w io.Writer) error {
			v, err := sp.one(ctx, s.client, team, name)
			if err != nil {
				return err
			}
			return printer.Object(w, p, v, sp.fields(p, v))
		},
		del: func(ctx context.Context, s *session, team, name string, force bool) error {
			return sp.del(ctx, s.client, team, name, force)
		},
		names: func(ctx context.Context, s *session, team string) ([]string, error) {
			var out []string
			for v, err := range sp.all(ctx, s.client, team) {
				if err != nil {
					return out, err
				}
				out = append(out, sp.key(v))
				if len(out) >= 200 {
					break
				}
			}
			return out, nil
		},
	}
}

// kinds are every kind, in the order help lists them.
func kinds() []kind {
	return []kind{workflowKind(), runKind(), scheduleKind(), taskKind(), templateKind(), teamKind(), tokenKind()}
}

// findKind finds a kind by its name, plural or alias.
func findKind(word string) (kind, error) {
	word = strings.ToLower(word)
	var known []string
	for _, k := range kinds() {
		if word == k.name || word == k.name+"s" || slices.Contains(k.aliases, word) {
			return k, nil
		}
		known = append(known, k.name+"s")
	}
	return kind{}, fmt.Errorf("unknown kind %q: use one of %s", word, strings.Join(known, ", "))
}

func col[T any](header string, v func(T) string) printer.Column[T] {
	return printer.Column[T]{Header: header, Value: func(_ *printer.Printer, r T) string { return v(r) }}
}

func wideCol[T any](header string, v func(T) string) printer.Column[T] {
	c := col(header, v)
	c.Wide = true
	return c
}

func timeCol[T any](header string, v func(T) time.Time) printer.Column[T] {
	return printer.Column[T]{Header: header, Value: func(p *printer.Printer, r T) string { return p.Time(v(r)) }}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func millis(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return printer.Short(time.Duration(ms) * time.Millisecond)
}

// pairs writes labels as k=v, sorted.
func pairs(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return strings.Join(out, ",")
}

func nameValues(vs []client.NameValue) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.Name + "=" + valueString(v.Value)
	}
	return strings.Join(out, ", ")
}

func workflowKind() kind {
	return makeKind(spec[client.Workflow]{
		name: "workflow", aliases: []string{"wf", "wfs"}, team: true,
		cols: []printer.Column[client.Workflow]{
			col("NAME", func(w client.Workflow) string { return w.Name }),
			col("STATUS", func(w client.Workflow) string { return w.Status }),
			col("VERSION", func(w client.Workflow) string { return itoa(w.Version) }),
			wideCol("DISPLAY NAME", func(w client.Workflow) string { return w.DisplayName }),
			wideCol("LABELS", func(w client.Workflow) string { return pairs(w.Labels) }),
			timeCol("CREATED", func(w client.Workflow) time.Time { return w.CreationDate }),
		},
		all: func(ctx context.Context, c *client.Client, team string) iter.Seq2[client.Workflow, error] {
			return c.Workflows(ctx, team, client.WorkflowQuery{})
		},
		one: func(ctx context.Context, c *client.Client, team, name string) (*client.Workflow, error) {
			return c.GetWorkflow(ctx, team, name)
		},
		fields: func(p *printer.Printer, w *client.Workflow) [][2]string {
			tasks := make([]string, len(w.Tasks))
			for i, t := range w.Tasks {
				tasks[i] = t.Name + " (" + t.Type + ")"
			}
			params := make([]string, len(w.Params))
			for i, pr := range w.Params {
				params[i] = pr.Name
				if pr.Required {
					params[i] += " (required)"
				}
			}
			return [][2]string{
				{"Name", w.Name}, {"Display name", w.DisplayName}, {"Team", w.Team}, {"Status", w.Status},
				{"Version", itoa(w.Version)}, {"Created", p.Time(w.CreationDate)}, {"Description", w.Description},
				{"Labels", pairs(w.Labels)}, {"Triggers", triggers(w.Triggers)}, {"Params", strings.Join(params, ", ")},
				{"Tasks", strings.Join(tasks, ", ")},
			}
		},
		del: func(ctx context.Context, c *client.Client, team, name string, force bool) error {
			return c.DeleteWorkflow(ctx, team, name, force)
		},
		key: func(w client.Workflow) string { return w.Name },
	})
}

// triggers names a workflow's enabled triggers.
func triggers(t *client.Triggers) string {
	if t == nil {
		return ""
	}
	var on []string
	for _, tr := range []struct {
		name string
		t    *client.Trigger
	}{{"manual", t.Manual}, {"schedule", t.Schedule}, {"webhook", t.Webhook}, {"event", t.Event}, {"codehost", t.Codehost}} {
		if tr.t != nil && tr.t.Enabled != nil && *tr.t.Enabled {
			on = append(on, tr.name)
		}
	}
	return strings.Join(on, ", ")
}

var runCols = []printer.Column[client.WorkflowRun]{
	col("ID", func(r client.WorkflowRun) string { return r.ID }),
	col("WORKFLOW", func(r client.WorkflowRun) string { return r.WorkflowRef }),
	col("STATUS", func(r client.WorkflowRun) string { return r.Status }),
	wideCol("PHASE", func(r client.WorkflowRun) string { return r.Phase }),
	wideCol("VERSION", func(r client.WorkflowRun) string { return itoa(r.WorkflowVersion) }),
	wideCol("TRIGGER", func(r client.WorkflowRun) string { return r.Trigger }),
	col("DURATION", func(r client.WorkflowRun) string { return millis(r.Duration) }),
	timeCol("CREATED", func(r client.WorkflowRun) time.Time { return r.CreationDate }),
}

func runKind() kind {
	return makeKind(spec[client.WorkflowRun]{
		name: "run", aliases: []string{"workflowrun", "workflowruns"}, team: true,
		cols: runCols,
		all: func(ctx context.Context, c *client.Client, team string) iter.Seq2[client.WorkflowRun, error] {
			return c.WorkflowRuns(ctx, team, client.RunQuery{Order: "DESC", Limit: 100})
		},
		one: func(ctx context.Context, c *client.Client, team, id string) (*client.WorkflowRun, error) {
			return c.GetWorkflowRun(ctx, team, id)
		},
		fields: runFields,
		del: func(context.Context, *client.Client, string, string, bool) error {
			return fmt.Errorf("runs are kept as history and not deleted: `baton run cancel RUN` stops one")
		},
		key: func(r client.WorkflowRun) string { return r.ID },
	})
}

func runFields(p *printer.Printer, r *client.WorkflowRun) [][2]string {
	var by string
	if r.InitiatedBy != nil {
		by = strings.TrimSpace(r.InitiatedBy.Type + " " + person(r.InitiatedBy.Name, r.InitiatedBy.ID))
	}
	fields := [][2]string{
		{"ID", r.ID}, {"Workflow", fmt.Sprintf("%s v%d", r.WorkflowRef, r.WorkflowVersion)}, {"Team", r.Team},
		{"Status", r.Status}, {"Phase", r.Phase}, {"Message", r.StatusMessage}, {"Trigger", r.Trigger},
		{"Initiated by", by}, {"Created", p.Time(r.CreationDate)}, {"Started", p.Time(r.StartTime)},
		{"Duration", millis(r.Duration)}, {"Retry of", r.RetryOf}, {"Parent run", r.ParentRun},
		{"Labels", pairs(r.Labels)}, {"Params", nameValues(r.Params)}, {"Results", nameValues(r.Results)},
	}
	for i, t := range r.Tasks {
		label := ""
		if i == 0 {
			label = "Tasks"
		}
		line := fmt.Sprintf("%s (%s) %s", t.Name, t.Type, t.Status)
		if d := millis(t.Duration); d != "" {
			line += " " + d
		}
		if t.StatusMessage != "" {
			line += ": " + t.StatusMessage
		}
		fields = append(fields, [2]string{label, line + "  [" + t.ID + "]"})
	}
	return fields
}

func scheduleKind() kind {
	return makeKind(spec[client.WorkflowSchedule]{
		name: "schedule", aliases: []string{"sched"}, team: true,
		cols: []printer.Column[client.WorkflowSchedule]{
			col("ID", func(s client.WorkflowSchedule) string { return s.ID }),
			col("NAME", func(s client.WorkflowSchedule) string { return s.Name }),
			col("WORKFLOW", func(s client.WorkflowSchedule) string { return s.WorkflowRef }),
			col("STATUS", func(s client.WorkflowSchedule) string { return s.Status }),
			col("WHEN", scheduleWhen),
			wideCol("TIMEZONE", func(s client.WorkflowSchedule) string { return s.Timezone }),
			timeCol("NEXT", func(s client.WorkflowSchedule) time.Time { return s.NextScheduleDate }),
			printer.Column[client.WorkflowSchedule]{Header: "LAST", Wide: true,
				Value: func(p *printer.Printer, s client.WorkflowSchedule) string { return p.Time(s.LastScheduleDate) }},
		},
		all: func(ctx context.Context, c *client.Client, team string) iter.Seq2[client.WorkflowSchedule, error] {
			return c.Schedules(ctx, team, client.ScheduleQuery{Limit: 1000})
		},
		one: func(ctx context.Context, c *client.Client, team, id string) (*client.WorkflowSchedule, error) {
			return c.GetSchedule(ctx, team, id)
		},
		fields: scheduleFields,
		del: func(ctx context.Context, c *client.Client, team, id string, _ bool) error {
			return c.DeleteSchedule(ctx, team, id)
		},
		key: func(s client.WorkflowSchedule) string { return s.ID },
	})
}

func scheduleWhen(s client.WorkflowSchedule) string {
	if s.Type == "runOnce" {
		if s.DateSchedule.IsZero() {
			return "once"
		}
		return "once at " + s.DateSchedule.UTC().Format(time.RFC3339)
	}
	return s.CronSchedule
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return ""
}

func taskKind() kind {
	return makeKind(spec[client.Task]{
		name: "task",
		cols: []printer.Column[client.Task]{
			col("NAME", func(t client.Task) string { return t.Name }),
			col("TYPE", func(t client.Task) string { return t.Type }),
			col("VERSION", func(t client.Task) string { return itoa(t.Version) }),
			col("STATUS", func(t client.Task) string { return t.Status }),
			col("SCOPE", func(t client.Task) string { return strings.TrimSuffix(t.Scope+" "+t.Team, " ") }),
			wideCol("CATEGORY", func(t client.Task) string { return t.Category }),
			wideCol("DISPLAY NAME", func(t client.Task) string { return t.DisplayName }),
			timeCol("CREATED", func(t client.Task) time.Time { return t.CreationDate }),
		},
		// The team's tasks (when a team is known) after the global catalogue.
		all: func(ctx context.Context, c *client.Client, team string) iter.Seq2[client.Task, error] {
			return func(yield func(client.Task, error) bool) {
				for t, err := range c.Tasks(ctx, client.TaskQuery{}) {
					if !yield(t, err) || err != nil {
						return
					}
				}
				if team == "" {
					return
				}
				for t, err := range c.TeamTasks(ctx, team, client.TaskQuery{}) {
					if !yield(t, err) || err != nil {
						return
					}
				}
			}
		},
		// A team's task of that name first, else the global one.
		one: func(ctx context.Context, c *client.Client, team, name string) (*client.Task, error) {
			if team != "" {
				t, err := c.GetTeamTask(ctx, team, name)
				if !client.IsNotFound(err) {
					return t, err
				}
			}
			return c.GetGlobalTask(ctx, name)
		},
		fields: func(p *printer.Printer, t *client.Task) [][2]string {
			var params, results []string
			var image, script string
			if t.Spec != nil {
				for _, pr := range t.Spec.Params {
					params = append(params, pr.Name)
				}
				for _, r := range t.Spec.Results {
					results = append(results, valueString(r["name"]))
				}
				image, script = t.Spec.Image, firstLines(t.Spec.Script, 3)
			}
			return [][2]string{
				{"Name", t.Name}, {"Display name", t.DisplayName}, {"Type", t.Type}, {"Version", itoa(t.Version)},
				{"Status", t.Status}, {"Scope", strings.TrimSuffix(t.Scope+" "+t.Team, " ")}, {"Category", t.Category},
				{"Description", t.Description}, {"Image", image}, {"Script", script},
				{"Params", strings.Join(params, ", ")}, {"Results", strings.Join(results, ", ")}, {"Created", p.Time(t.CreationDate)},
			}
		},
		// Only a team's tasks are deleted here: the global catalogue is an admin's, through the API.
		del: func(ctx context.Context, c *client.Client, team, name string, _ bool) error {
			if team == "" {
				return fmt.Errorf("only a team's tasks are deleted: give --team")
			}
			return c.DeleteTeamTask(ctx, team, name)
		},
		key: func(t client.Task) string { return t.Name },
	})
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, " / ")
}

func templateKind() kind {
	return makeKind(spec[client.WorkflowTemplate]{
		name: "template", aliases: []string{"workflowtemplate", "workflowtemplates"},
		cols: []printer.Column[client.WorkflowTemplate]{
			col("NAME", func(t client.WorkflowTemplate) string { return t.Name }),
			col("VERSION", func(t client.WorkflowTemplate) string { return itoa(t.Version) }),
			col("TASKS", func(t client.WorkflowTemplate) string { return strconv.Itoa(len(t.Tasks)) }),
			wideCol("DISPLAY NAME", func(t client.WorkflowTemplate) string { return t.DisplayName }),
			timeCol("CREATED", func(t client.WorkflowTemplate) time.Time { return t.CreationDate }),
		},
		all: func(ctx context.Context, c *client.Client, _ string) iter.Seq2[client.WorkflowTemplate, error] {
			return c.WorkflowTemplates(ctx, client.TemplateQuery{})
		},
		one: func(ctx context.Context, c *client.Client, _, name string) (*client.WorkflowTemplate, error) {
			return c.GetWorkflowTemplate(ctx, name)
		},
		fields: func(p *printer.Printer, t *client.WorkflowTemplate) [][2]string {
			tasks := make([]string, len(t.Tasks))
			for i, tk := range t.Tasks {
				tasks[i] = tk.Name + " (" + tk.Type + ")"
			}
			return [][2]string{
				{"Name", t.Name}, {"Display name", t.DisplayName}, {"Version", itoa(t.Version)},
				{"Description", t.Description}, {"Labels", pairs(t.Labels)}, {"Tasks", strings.Join(tasks, ", ")},
				{"Created", p.Time(t.CreationDate)},
			}
		},
		del: func(ctx context.Context, c *client.Client, _, name string, _ bool) error {
			return c.DeleteWorkflowTemplate(ctx, name)
		},
		key: func(t client.WorkflowTemplate) string { return t.Name },
	})
}

func teamKind() kind {
	return makeKind(spec[client.Team]{
		name: "team",
		cols: []printer.Column[client.Team]{
			col("NAME", func(t client.Team) string { return t.Name }),
			col("STATUS", func(t client.Team) string { return t.Status }),
			col("MEMBERS", func(t client.Team) string { return strconv.Itoa(len(t.Members)) }),
			wideCol("DISPLAY NAME", func(t client.Team) string { return t.DisplayName }),
			wideCol("LABELS", func(t client.Team) string { return pairs(t.Labels) }),
			timeCol("CREATED", func(t client.Team) time.Time { return t.CreationDate }),
		},
		all: func(ctx context.Context, c *client.Client, _ string) iter.Seq2[client.Team, error] {
			return c.Teams(ctx, client.TeamQuery{})
		},
		one: func(ctx context.Context, c *client.Client, _, name string) (*client.Team, error) {
			return c.GetTeam(ctx, name)
		},
		fields: func(p *printer.Printer, t *client.Team) [][2]string {
			members := make([]string, len(t.Members))
			for i, m := range t.Members {
				members[i] = person(m.Email, m.Name, m.ID) + " (" + m.Role + ")"
			}
			groups := make([]string, len(t.ApproverGroups))
			for i, g := range t.ApproverGroups {
				groups[i] = fmt.Sprintf("%s (%d)", g.Name, len(g.Approvers))
			}
			return [][2]string{
				{"Name", t.Name}, {"Display name", t.DisplayName}, {"Status", t.Status}, {"Labels", pairs(t.Labels)},
				{"Members", strings.Join(members, ", ")}, {"Approver groups", strings.Join(groups, ", ")},
				{"Created", p.Time(t.CreationDate)},
			}
		},
		del: func(ctx context.Context, c *client.Client, _, name string, force bool) error {
			return c.DeleteTeam(ctx, name, force)
		},
		key: func(t client.Team) string { return t.Name },
	})
}

var tokenCols = []printer.Column[client.Token]{
	col("ID", func(t client.Token) string { return t.ID }),
	col("NAME", func(t client.Token) string { return t.Name }),
	col("TYPE", func(t client.Token) string { return t.Type }),
	col("PRINCIPAL", func(t client.Token) string { return t.Principal }),
	col("VALID", func(t client.Token) string { return strconv.FormatBool(t.Valid) }),
	wideCol("PERMISSIONS", func(t client.Token) string { return strings.Join(t.Permissions, ",") }),
	{Header: "EXPIRES", Value: func(p *printer.Printer, t client.Token) string { return p.Time(t.ExpirationDate) }},
	timeCol("CREATED", func(t client.Token) time.Time { return t.CreationDate }),
}

func tokenKind() kind {
	return makeKind(spec[client.Token]{
		name: "token",
		cols: tokenCols,
		all: func(ctx context.Context, c *client.Client, _ string) iter.Seq2[client.Token, error] {
			return c.Tokens(ctx, client.TokenQuery{})
		},
		// The API reads tokens by search only: the one of that id among those the caller sees.
		one: func(ctx context.Context, c *client.Client, _, id string) (*client.Token, error) {
			for t, err := range c.Tokens(ctx, client.TokenQuery{}) {
				if err != nil {
					return nil, err
				}
				if t.ID == id {
					return &t, nil
				}
			}
			return nil, fmt.Errorf("no token %q among those you may see (baton get tokens lists them)", id)
		},
		fields: func(p *printer.Printer, t *client.Token) [][2]string {
			return [][2]string{
				{"ID", t.ID}, {"Name", t.Name}, {"Description", t.Description}, {"Type", t.Type},
				{"Principal", t.Principal}, {"Permissions", strings.Join(t.Permissions, ", ")},
				{"Valid", strconv.FormatBool(t.Valid)}, {"Created by", t.CreatedBy}, {"Created", p.Time(t.CreationDate)},
				{"Expires", p.Time(t.ExpirationDate)}, {"Last used", p.Time(t.LastUsed)},
			}
		},
		del: func(ctx context.Context, c *client.Client, _, id string, _ bool) error {
			_, err := c.RevokeToken(ctx, id)
			return err
		},
		key: func(t client.Token) string { return t.ID },
	})
}
