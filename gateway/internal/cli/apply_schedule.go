package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// A schedule's id is the server's, so a Schedule document names its schedule by name
// within the team. Applying it compares the fields the document sets with the stored
// schedule's (both read as the API answers them, so a date written another way or a
// default spelled out compares equal): the same writes nothing; a difference replaces the
// stored schedule with it, the fields the document does not set kept as stored; no
// schedule of that name creates one. Archived schedules are history, not matched.

// scheduleServerFields are the fields of a schedule the server sets: a document may hold
// them (a schedule read back) but they are neither compared nor sent.
var scheduleServerFields = []string{"id", "team", "nextScheduleDate", "lastScheduleDate", "creationDate"}

// applySchedule applies d, a Schedule document of team, or with dryRun prints what would
// change.
func (s *session) applySchedule(ctx context.Context, d applyDoc, team, what string, dryRun bool, out io.Writer) error {
	want, set, err := scheduleDoc(d.body)
	if err != nil {
		return err
	}
	stored, err := s.scheduleNamed(ctx, team, d.name)
	if err != nil {
		return err
	}
	var have map[string]any
	if stored != nil {
		if have, err = scheduleSetFields(stored, set); err != nil {
			return err
		}
	}
	doc, err := scheduleSetFields(want, set)
	if err != nil {
		return err
	}
	if stored != nil && equalJSON(have, doc) {
		fmt.Fprintf(out, "%s unchanged\n", what)
		return nil
	}
	next := want
	if stored != nil {
		if next, err = mergeSchedule(stored, d.body); err != nil {
			return err
		}
	}
	if dryRun {
		return s.dryRunSchedule(ctx, d, team, what, next, stored, have, doc, out)
	}
	var saved *client.WorkflowSchedule
	if stored == nil {
		saved, err = s.client.CreateSchedule(ctx, team, next)
		what += " created"
	} else {
		saved, err = s.client.ApplySchedule(ctx, team, next)
		what += " configured"
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, what)
	return readBack(saved, set, doc, out)
}

// readBack notes the fields the server keeps otherwise than the document writes them (a
// zone or an expression it normalizes): written as the server keeps them, the next apply
// finds nothing to change.
func readBack(saved *client.WorkflowSchedule, set []string, doc map[string]any, out io.Writer) error {
	got, err := scheduleSetFields(saved, set)
	if err != nil {
		return err
	}
	for _, k := range set {
		if !equalJSON(got[k], doc[k]) {
			kept, _ := json.Marshal(got[k])
			fmt.Fprintf(out, "  note: the server keeps %s as %s; write it so for the next apply to find nothing to change\n", k, kept)
		}
	}
	return nil
}

// scheduleDoc reads a Schedule document (its kind and team taken out already) as the
// schedule it describes and the fields it sets; a field the API does not know is refused.
func scheduleDoc(body []byte) (*client.WorkflowSchedule, []string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, nil, err
	}
	for _, k := range scheduleServerFields {
		delete(fields, k)
	}
	clean, err := json.Marshal(fields)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.DisallowUnknownFields()
	var sch client.WorkflowSchedule
	if err := dec.Decode(&sch); err != nil {
		return nil, nil, fmt.Errorf("not a schedule: %w", err)
	}
	return &sch, slices.Sorted(maps.Keys(fields)), nil
}

// scheduleNamed is team's schedule called name that is not archived, nil when there is
// none; two of that name are refused, naming their ids.
func (s *session) scheduleNamed(ctx context.Context, team, name string) (*client.WorkflowSchedule, error) {
	var found []client.WorkflowSchedule
	for sch, err := range s.client.Schedules(ctx, team, client.ScheduleQuery{Limit: 1000}) {
		if err != nil {
			return nil, err
		}
		if sch.Name == name && sch.Status != "archived" {
			found = append(found, sch)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return &found[0], nil
	}
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = f.ID
	}
	return nil, fmt.Errorf("team %s has %d schedules named %s (ids %s): apply cannot tell which to change; "+
		"rename or delete all but one (baton schedule delete ID)", team, len(found), name, strings.Join(ids, ", "))
}

// scheduleSetFields is the fields set of sch as the API writes them, a catchupWindow as
// the server writes a duration.
func scheduleSetFields(sch *client.WorkflowSchedule, set []string) (map[string]any, error) {
	raw, err := json.Marshal(sch)
	if err != nil {
		return nil, err
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(set))
	for _, k := range set {
		if v, ok := all[k]; ok {
			out[k] = v
			// A window is a duration however it is written: 90m is the server's 1h30m0s.
			if w, ok := v.(string); ok && k == "catchupWindow" {
				if d, err := time.ParseDuration(w); err == nil {
					out[k] = d.String()
				}
			}
		} else {
			out[k] = nil // the empty value: absent from both, or set empty
		}
	}
	return out, nil
}

// mergeSchedule is stored with the fields body sets in place of its own.
func mergeSchedule(stored *client.WorkflowSchedule, body []byte) (*client.WorkflowSchedule, error) {
	raw, err := json.Marshal(stored)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	for _, k := range scheduleServerFields {
		delete(fields, k)
	}
	maps.Copy(m, fields)
	if raw, err = json.Marshal(m); err != nil {
		return nil, err
	}
	var next client.WorkflowSchedule
	if err := json.Unmarshal(raw, &next); err != nil {
		return nil, err
	}
	next.ID = stored.ID
	return &next, nil
}

func equalJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// dryRunSchedule checks what the server would check that it can without saving (the
// workflow exists, the cron expression is valid in the zone) and prints the diff of the
// stored schedule's fields against the document's.
func (s *session) dryRunSchedule(ctx context.Context, d applyDoc, team, what string, next, stored *client.WorkflowSchedule,
	have, doc map[string]any, out io.Writer) error {
	if next.WorkflowRef == "" {
		return errors.New("the schedule names no workflow: give it a workflowRef")
	}
	if _, err := s.client.GetWorkflow(ctx, team, next.WorkflowRef); client.IsNotFound(err) {
		return fmt.Errorf("the schedule's workflow %s is not in team %s (a dry run creates none, "+
			"not even one the same files hold)", next.WorkflowRef, team)
	} else if err != nil {
		return err
	}
	if next.CronSchedule != "" && next.Type != "runOnce" {
		v, err := s.client.ValidateCron(ctx, team, next.CronSchedule, next.Timezone)
		if err != nil {
			return err
		}
		if !v.Valid {
			return fmt.Errorf("cronSchedule %q: %s", next.CronSchedule, v.Message)
		}
	}
	from := what + " (none)"
	if stored == nil {
		fmt.Fprintf(out, "%s would be created\n", what)
	} else {
		fmt.Fprintf(out, "%s would be configured\n", what)
		from = fmt.Sprintf("%s (id %s)", what, stored.ID)
	}
	before, err := yamlOf(have)
	if err != nil {
		return err
	}
	after, err := yamlOf(doc)
	if err != nil {
		return err
	}
	return writeDiff(out, before, after, from, d.source)
}

// yamlOf is m as YAML without its empty fields, "" for none.
func yamlOf(m map[string]any) (string, error) {
	if m == nil {
		return "", nil
	}
	shown := maps.Clone(m)
	maps.DeleteFunc(shown, func(_ string, v any) bool { return v == nil })
	var b strings.Builder
	if err := printer.WriteYAML(&b, shown); err != nil {
		return "", err
	}
	return b.String(), nil
}
