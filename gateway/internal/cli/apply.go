package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// newApplyCmd is `baton apply -f FILE|DIR`: workflows, templates, tasks and schedules made
// what files say.
func newApplyCmd(env *Env) *cobra.Command {
	var files []string
	var dryRun bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE|DIR ...",
		Short: "Create or update workflows, templates, tasks and schedules from YAML or JSON files",
		Long: `Makes each workflow, template and task the files describe the latest version of its
name: creates it, adds a version, or, when the file says what the latest version holds
already, writes nothing (no new version). A schedule is found by its name in the team:
created when there is none, changed in place when a field the file sets differs, left
alone when none does. A file is YAML (several documents apart with ---) or JSON; a
directory is read for its .yaml, .yml and .json files, in name order.

Each document is the API's resource (as baton get prints it with -o yaml) with a kind:
"Workflow" (the default), "WorkflowTemplate", "Task" (a team's), "GlobalTask" (the global
catalogue's, an admin's to write) or "Schedule". A workflow, task or schedule goes to its
"team" field's team, else --team or the context's.

--dry-run validates each document on the server and prints what would change, as a
diff of the latest version (or stored schedule) against what would be saved, saving
nothing.`,
		Example: `  baton apply -f deploy.yaml
  baton apply -f tasks/ -f schedules/
  baton apply -f workflows/ --team infra
  baton apply -f deploy.yaml --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return errors.New("give the files to apply with -f FILE or -f DIR")
			}
			docs, err := readApplyDocs(files)
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			flagTeam, _ := cmd.Flags().GetString("team")
			out := cmd.OutOrStdout()
			var failed int
			for _, d := range docs {
				if err := s.hint(applyOne(cmd.Context(), s, flagTeam, d, dryRun, out)); err != nil {
					failed++
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %v\n", d.source, err)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d documents not applied", failed, len(docs))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "a file or directory to apply (repeatable)")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would change, saving nothing")
	return cmd
}

// Kinds apply takes.
const (
	kindWorkflow   = "workflow"
	kindTemplate   = "workflowtemplate"
	kindTask       = "task"
	kindGlobalTask = "globaltask"
	kindSchedule   = "schedule"
)

// teamOwned reports whether documents of kind belong to a team.
func teamOwned(kind string) bool {
	return kind == kindWorkflow || kind == kindTask || kind == kindSchedule
}

// applyDoc is one document to apply: where it came from, its kind, and the resource as
// JSON without its kind.
type applyDoc struct {
	source string
	kind   string
	team   string
	name   string
	body   []byte
}

// readApplyDocs reads the documents of files, directories read for their YAML and JSON
// files in name order.
func readApplyDocs(paths []string) ([]applyDoc, error) {
	var docs []applyDoc
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		files := []string{path}
		if info.IsDir() {
			files = nil
			err := filepath.WalkDir(path, func(p string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if !e.IsDir() && slices.Contains([]string{".yaml", ".yml", ".json"}, strings.ToLower(filepath.Ext(p))) {
					files = append(files, p)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			slices.Sort(files)
		}
		for _, f := range files {
			got, err := readApplyFile(f)
			if err != nil {
				return nil, err
			}
			docs = append(docs, got...)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no document in %s", strings.Join(paths, ", "))
	}
	return docs, nil
}

// readApplyFile reads the documents of one file: YAML (JSON being YAML too), each a
// mapping.
func readApplyFile(path string) ([]applyDoc, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var docs []applyDoc
	for n := 1; ; n++ {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		source := fmt.Sprintf("%s (document %d)", path, n)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		if v == nil {
			continue // an empty document, between two ---
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: a document is a mapping of a resource's fields", source)
		}
		d, err := newApplyDoc(source, m)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

func newApplyDoc(source string, m map[string]any) (applyDoc, error) {
	d := applyDoc{source: source, kind: kindWorkflow}
	if k, ok := m["kind"]; ok {
		s, _ := k.(string)
		switch strings.ToLower(s) {
		case "workflow":
		case "workflowtemplate", "template":
			d.kind = kindTemplate
		case "task":
			d.kind = kindTask
		case "globaltask":
			d.kind = kindGlobalTask
		case "schedule":
			d.kind = kindSchedule
		default:
			return applyDoc{}, fmt.Errorf("%s: kind %v is not Workflow, WorkflowTemplate, Task, GlobalTask or Schedule", source, k)
		}
		delete(m, "kind")
	}
	d.name, _ = m["name"].(string)
	if d.name == "" {
		return applyDoc{}, fmt.Errorf("%s: the document has no name", source)
	}
	if teamOwned(d.kind) {
		d.team, _ = m["team"].(string)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return applyDoc{}, fmt.Errorf("%s: %w", source, err)
	}
	d.body = body
	return d, nil
}

// applyOne applies d (or, with dryRun, prints what would change) and says what became of
// it on out.
func applyOne(ctx context.Context, s *session, flagTeam string, d applyDoc, dryRun bool, out io.Writer) error {
	what := "template " + d.name
	if d.kind == kindGlobalTask {
		what = "global task " + d.name
	}
	team := d.team
	if teamOwned(d.kind) {
		switch {
		case team != "" && flagTeam != "" && team != flagTeam:
			return fmt.Errorf("the document is team %s's, not %s's (--team)", team, flagTeam)
		case team == "":
			team = s.ctx.Team
		}
		if team == "" {
			return fmt.Errorf(`the %s names no team: give it a "team" field, or --team`, d.kind)
		}
		what = d.kind + " " + team + "/" + d.name
	}
	if d.kind == kindSchedule {
		return s.applySchedule(ctx, d, team, what, dryRun, out)
	}
	current, err := s.currentVersion(ctx, d.kind, team, d.name)
	if err != nil {
		return err
	}
	if dryRun {
		return s.dryRun(ctx, d, team, what, current, out)
	}
	var saved int64
	var created bool
	switch d.kind {
	case kindWorkflow:
		w, c, err := s.client.ApplyWorkflowJSON(ctx, team, d.body)
		if err != nil {
			return err
		}
		saved, created = w.Version, c
	case kindTask, kindGlobalTask:
		t, c, err := s.applyTask(ctx, d, team, false)
		if err != nil {
			return err
		}
		saved, created = t.Version, c
	default:
		w, c, err := s.client.ApplyWorkflowTemplateJSON(ctx, d.body)
		if err != nil {
			return err
		}
		saved, created = w.Version, c
	}
	switch {
	case created:
		fmt.Fprintf(out, "%s created (version %d)\n", what, saved)
	case current != nil && saved == current.number:
		fmt.Fprintf(out, "%s unchanged (version %d)\n", what, saved)
	default:
		fmt.Fprintf(out, "%s configured (version %d)\n", what, saved)
	}
	return nil
}

// version is a workflow's or template's version as read or as it would be saved: its
// number and the whole of it.
type version struct {
	number int64
	doc    any
}

// currentVersion reads the latest version of a workflow or template, nil when there is
// none.
func (s *session) currentVersion(ctx context.Context, kind, team, name string) (*version, error) {
	var v *version
	var err error
	switch kind {
	case kindWorkflow:
		var w *client.Workflow
		if w, err = s.client.GetWorkflow(ctx, team, name); err == nil {
			v = &version{w.Version, w}
		}
	case kindTask, kindGlobalTask:
		var t *client.Task
		if kind == kindTask {
			t, err = s.client.GetTeamTask(ctx, team, name)
		} else {
			t, err = s.client.GetGlobalTask(ctx, name)
		}
		if err == nil {
			v = &version{t.Version, t}
		}
	default:
		var t *client.WorkflowTemplate
		if t, err = s.client.GetWorkflowTemplate(ctx, name); err == nil {
			v = &version{t.Version, t}
		}
	}
	if client.IsNotFound(err) {
		return nil, nil
	}
	return v, err
}

// dryRun prints what applying d would change of current (nil: d would be created).
func (s *session) dryRun(ctx context.Context, d applyDoc, team, what string, current *version, out io.Writer) error {
	var would version
	switch d.kind {
	case kindWorkflow:
		w, _, err := s.client.DryRunWorkflowJSON(ctx, team, d.body)
		if err != nil {
			return err
		}
		would = version{w.Version, w}
	case kindTask, kindGlobalTask:
		t, _, err := s.applyTask(ctx, d, team, true)
		if err != nil {
			return err
		}
		would = version{t.Version, t}
	default:
		t, _, err := s.client.DryRunWorkflowTemplateJSON(ctx, d.body)
		if err != nil {
			return err
		}
		would = version{t.Version, t}
	}
	from := what + " (none)"
	switch {
	case current == nil:
		fmt.Fprintf(out, "%s would be created (version 1)\n", what)
	case would.number == current.number:
		fmt.Fprintf(out, "%s unchanged (version %d)\n", what, current.number)
		return nil
	default:
		fmt.Fprintf(out, "%s would be configured (version %d)\n", what, would.number)
		from = fmt.Sprintf("%s (version %d)", what, current.number)
	}
	before, err := comparable(current)
	if err != nil {
		return err
	}
	after, err := comparable(&would)
	if err != nil {
		return err
	}
	return writeDiff(out, before, after, from, d.source)
}

// writeDiff writes the unified diff of before (named from) and after (named to).
func writeDiff(out io.Writer, before, after, from, to string) error {
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: diffLines(before), B: diffLines(after),
		FromFile: from, ToFile: to, Context: 3})
	if err != nil {
		return err
	}
	_, err = io.WriteString(out, diff)
	return err
}

// diffLines is s as the diff's lines, each ended by a newline: none for "", and no empty
// line after the last.
func diffLines(s string) []string {
	if s == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(s, "\n"))
}

// comparable is v as YAML without what each save changes (version, dates, changelog),
// "" for none.
func comparable(v *version) (string, error) {
	if v == nil {
		return "", nil
	}
	raw, err := json.Marshal(v.doc)
	if err != nil {
		return "", err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	for _, k := range []string{"version", "creationDate", "changelog"} {
		delete(m, k)
	}
	var b strings.Builder
	if err := printer.WriteYAML(&b, m); err != nil {
		return "", err
	}
	return b.String(), nil
}
