package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/client"
)

// newScheduleCmd is `baton schedule`: a team's schedules, with when they fire next in
// their own time zone.
func newScheduleCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "schedule",
		Aliases: []string{"schedules", "sched"},
		Short:   "List, create, pause, resume, backfill and delete a team's schedules",
		Long: `A schedule submits runs of a workflow when its cron expression fires, read in the
schedule's IANA time zone. Fire times are printed in that zone. Schedules are named by
their id (baton schedule list shows them).`,
		Example: `  baton schedule list
  baton schedule create deploy --cron "0 9 * * MON-FRI" --timezone Europe/Paris -p env=prod
  baton schedule backfill 0193a1b2c3 --from 2026-12-01 --to 2026-12-03`,
	}
	cmd.AddCommand(newScheduleListCmd(env), newScheduleDescribeCmd(env), newScheduleCreateCmd(env),
		newSchedulePauseCmd(env, "pause", "inactive"), newSchedulePauseCmd(env, "resume", "active"),
		newScheduleBackfillCmd(env), newScheduleDeleteCmd(env))
	return cmd
}

// Fire times a table shows per schedule, and a wide table or a describe.
const (
	tableFires = 2
	wideFires  = 5
)

// firing is a schedule with its next fire times.
type firing struct {
	client.WorkflowSchedule
	fires []time.Time
}

var scheduleCols = []printer.Column[firing]{
	col("ID", func(s firing) string { return s.ID }),
	col("NAME", func(s firing) string { return s.Name }),
	col("WORKFLOW", func(s firing) string { return s.WorkflowRef }),
	col("TYPE", func(s firing) string { return s.Type }),
	col("WHEN", func(s firing) string { return scheduleWhen(s.WorkflowSchedule) }),
	col("TIMEZONE", func(s firing) string { return s.Timezone }),
	col("STATUS", func(s firing) string { return scheduleStatus(s.WorkflowSchedule) }),
	{Header: "NEXT FIRES", Value: func(p *printer.Printer, s firing) string {
		n := tableFires
		if p.Format == printer.Wide {
			n = wideFires
		}
		return strings.Join(inZone(s.fires[:min(n, len(s.fires))], s.Timezone), ", ")
	}},
	{Header: "LAST", Wide: true, Value: func(p *printer.Printer, s firing) string { return p.Time(s.LastScheduleDate) }},
	wideCol("OVERLAP", func(s firing) string { return s.OverlapPolicy }),
	wideCol("MISFIRE", func(s firing) string { return s.MisfirePolicy }),
}

// scheduleStatus is a schedule's status, saying when its workflow's schedule trigger is off
// (the schedule is kept but does not fire).
func scheduleStatus(s client.WorkflowSchedule) string {
	if s.TriggerDisabled && s.Status == "active" {
		return "active (trigger disabled)"
	}
	return s.Status
}

// fires reports whether a schedule fires at all now.
func fires(s client.WorkflowSchedule) bool { return s.Status == "active" && !s.TriggerDisabled }

// inZone writes instants as wall times of the IANA zone tz, each with its abbreviation
// (which may change across a daylight saving change); an unknown zone writes UTC.
func inZone(ts []time.Time, tz string) []string {
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.In(loc).Format("2006-01-02 15:04 MST")
	}
	return out
}

// nextFires answers the next n fire times of each schedule that fires, by id, from the
// API's calendars: a week ahead first, then a year ahead (the longest window it answers)
// for the schedules that fire less often.
func nextFires(ctx context.Context, c *client.Client, team string, scheds []client.WorkflowSchedule, n int) (map[string][]time.Time, error) {
	out := map[string][]time.Time{}
	var ids []string
	for _, s := range scheds {
		if fires(s) {
			ids = append(ids, s.ID)
		}
	}
	now := time.Now()
	for _, span := range []time.Duration{7 * 24 * time.Hour, 365 * 24 * time.Hour} {
		var short []string
		for len(ids) > 0 {
			batch := ids[:min(len(ids), 50)] // the ids travel in the query
			ids = ids[len(batch):]
			cals, err := c.GetScheduleCalendars(ctx, team, batch, now, now.Add(span))
			if err != nil {
				return nil, err
			}
			for _, cal := range cals {
				if len(cal.Dates) > n {
					cal.Dates = cal.Dates[:n]
				}
				out[cal.ScheduleID] = cal.Dates
				if len(cal.Dates) < n {
					short = append(short, cal.ScheduleID)
				}
			}
		}
		ids = short
	}
	return out, nil
}

func newScheduleListCmd(env *Env) *cobra.Command {
	var output, workflow string
	var statuses []string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the team's schedules with their next fire times in each schedule's time zone",
		Long: `Lists the team's schedules (the context's team, or --team): workflow, type, expression,
time zone, status and the next fire times in the schedule's own zone (-o wide: more of
them, the last fire and the policies). A paused schedule, or one whose workflow's schedule
trigger is disabled, has no next fire. -o json and -o yaml print the API's schedules.`,
		Example: `  baton schedule list
  baton schedule list --team infra -o wide
  baton schedule list --workflow deploy --status active -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			s, err := connect(cmd, env)
			if err != nil {
				return err
			}
			if s.ctx.Team == "" {
				return fmt.Errorf("schedules are in a team: give --team, or log in with --team")
			}
			q := client.ScheduleQuery{Statuses: statuses, Limit: 1000}
			if workflow != "" {
				q.Workflows = []string{workflow}
			}
			scheds, err := client.Collect(s.client.Schedules(cmd.Context(), s.ctx.Team, q))
			if err != nil {
				return s.hint(err)
			}
			if scheds == nil {
				scheds = []client.WorkflowSchedule{}
			}
			p := printer.New(format)
			rows := make([]firing, len(scheds))
			var next map[string][]time.Time
			if format == printer.Table || format == printer.Wide {
				if next, err = nextFires(cmd.Context(), s.client, s.ctx.Team, scheds, wideFires); err != nil {
					return s.hint(err)
				}
			}
			for i, sc := range scheds {
				rows[i] = firing{sc, next[sc.ID]}
			}
			return printer.Print(cmd.OutOrStdout(), p, scheds, rows, scheduleCols)
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringVar(&workflow, "workflow", "", "only the schedules of this workflow")
	cmd.Flags().StringSliceVar(&statuses, "status", nil, "only schedules of these statuses (active, inactive, completed, archived)")
	return cmd
}

func newScheduleDescribeCmd(env *Env) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "describe ID",
		Short:             "Show a schedule in detail, with its next fire times in its time zone",
		Example:           `  baton schedule describe 0193a1b2c3` + "\n" + `  baton schedule describe infra/0193a1b2c3 -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "schedule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			s, team, sc, err := readSchedule(cmd, env, args[0])
			if err != nil {
				return err
			}
			p := printer.New(format)
			fields := scheduleFields(p, sc)
			if format == printer.Table || format == printer.Wide {
				next, err := nextFires(cmd.Context(), s.client, team, []client.WorkflowSchedule{*sc}, wideFires)
				if err != nil {
					return s.hint(err)
				}
				for i, f := range inZone(next[sc.ID], sc.Timezone) {
					label := ""
					if i == 0 {
						label = "Next fires"
					}
					fields = append(fields, [2]string{label, f})
				}
			}
			return printer.Object(cmd.OutOrStdout(), p, sc, fields)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

// scheduleFields are a schedule's describe lines, baton describe schedule's too.
func scheduleFields(p *printer.Printer, s *client.WorkflowSchedule) [][2]string {
	next := "" // a schedule that does not fire has no next fire, whatever date it keeps
	if fires(*s) {
		next = p.Time(s.NextScheduleDate)
	}
	return [][2]string{
		{"ID", s.ID}, {"Name", s.Name}, {"Description", s.Description}, {"Workflow", s.WorkflowRef},
		{"Type", s.Type}, {"Status", s.Status}, {"When", scheduleWhen(*s)}, {"Timezone", s.Timezone},
		{"Trigger disabled", boolWord(s.TriggerDisabled)}, {"Overlap policy", s.OverlapPolicy},
		{"Misfire policy", s.MisfirePolicy}, {"Next", next}, {"Last", p.Time(s.LastScheduleDate)},
		{"Params", nameValues(s.Params)}, {"Labels", pairs(s.Labels)}, {"Created", p.Time(s.CreationDate)},
	}
}

func newScheduleCreateCmd(env *Env) *cobra.Command {
	var cron, timezone, name, description, output, overlap, misfire, at string
	var params, labels []string
	cmd := &cobra.Command{
		Use:   "create WORKFLOW (--cron EXPR | --at TIME)",
		Short: "Create a schedule of a workflow: a cron expression in a time zone, or one run at a time",
		Long: `Creates a schedule of WORKFLOW (NAME in the context's team, or TEAM/NAME) that submits
a run each time --cron fires in --timezone (an IANA zone, UTC by default), with the params
given by -p key=value. The expression has 5 fields (minute hour day month weekday), or 6
with seconds first; names (MON, JAN), ranges, lists and steps, @daily and the like, and
@every DURATION are understood. --at makes a runOnce schedule instead, firing once at
that time (RFC 3339, or YYYY-MM-DD[THH:MM] in --timezone).

The expression is checked first: one that is invalid or never fires is refused with the
reason, and nothing is created.`,
		Example: `  baton schedule create deploy --cron "0 9 * * MON-FRI" --timezone Europe/Paris -p env=prod
  baton schedule create infra/report --cron @daily --name nightly-report
  baton schedule create deploy --at 2026-12-24T18:00 --timezone America/New_York`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "workflow"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			if (cron == "") == (at == "") {
				return fmt.Errorf("give either --cron EXPR or --at TIME")
			}
			loc, err := time.LoadLocation(timezone)
			if err != nil || timezone == "" || strings.EqualFold(timezone, "local") {
				return fmt.Errorf("--timezone %q is not an IANA time zone (such as Europe/Paris or UTC)", timezone)
			}
			p, err := nameValueFlags(params)
			if err != nil {
				return err
			}
			l, err := keyValues("label", labels)
			if err != nil {
				return err
			}
			s, team, workflow, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			sc := &client.WorkflowSchedule{Name: name, Description: description, WorkflowRef: workflow, Type: "cron",
				CronSchedule: cron, Timezone: timezone, Params: p, Labels: l, OverlapPolicy: overlap, MisfirePolicy: misfire}
			if at != "" {
				when, err := parseTime(at, loc)
				if err != nil {
					return fmt.Errorf("--at: %w", err)
				}
				sc.Type, sc.CronSchedule, sc.DateSchedule = "runOnce", "", when
			} else {
				// The API's check says why an expression is refused; creating answers only that it is.
				v, err := s.client.ValidateCron(cmd.Context(), team, cron, timezone)
				if err != nil {
					return s.hint(err)
				}
				if !v.Valid {
					return fmt.Errorf("--cron %q: %s", cron, strings.TrimSuffix(v.Message, "."))
				}
			}
			created, err := s.client.CreateSchedule(cmd.Context(), team, sc)
			if err != nil {
				return s.scheduleHint(err, team)
			}
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(cmd.OutOrStdout(), printer.New(format), created, nil)
			}
			next, err := nextFires(cmd.Context(), s.client, team, []client.WorkflowSchedule{*created}, 3)
			if err != nil {
				return s.hint(err)
			}
			say := fmt.Sprintf("Schedule %s of %s created (%s, %s)", created.ID, created.WorkflowRef, scheduleWhen(*created), created.Timezone)
			if f := inZone(next[created.ID], created.Timezone); len(f) > 0 {
				say += ": next fires " + strings.Join(f, ", ") + "."
			} else if created.TriggerDisabled {
				say += ": it does not fire while the workflow's schedule trigger is disabled.\n" + triggerHint
			} else {
				say += "."
			}
			fmt.Fprintln(cmd.OutOrStdout(), say)
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringVar(&cron, "cron", "", "the cron expression, e.g. \"0 9 * * MON-FRI\" or @hourly")
	cmd.Flags().StringVar(&at, "at", "", "fire once at this time instead (a runOnce schedule)")
	cmd.Flags().StringVar(&timezone, "timezone", "UTC", "the IANA time zone the expression is read in")
	cmd.Flags().StringVar(&name, "name", "", "the schedule's name (default: the workflow's)")
	cmd.Flags().StringVar(&description, "description", "", "what the schedule is for")
	cmd.Flags().StringArrayVarP(&params, "param", "p", nil, "a param of each run, key=value (repeatable)")
	cmd.Flags().StringArrayVar(&labels, "label", nil, "a label of each run, key=value (repeatable)")
	cmd.Flags().StringVar(&overlap, "overlap", "", "while the previous run has not ended: allow (default), skip, bufferOne or cancelOther")
	cmd.Flags().StringVar(&misfire, "misfire", "", "fires missed while no scheduler ran: fireOnce (default), skip or fireAll")
	return cmd
}

// nameValueFlags reads -p key=value flags as the API's params, in the order given.
func nameValueFlags(items []string) ([]client.NameValue, error) {
	var out []client.NameValue
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--param %q: want key=value", it)
		}
		out = append(out, client.NameValue{Name: k, Value: v})
	}
	return out, nil
}

func newSchedulePauseCmd(env *Env, verb, status string) *cobra.Command {
	short := "Pause a schedule: it fires no more until resumed"
	example := "  baton schedule pause 0193a1b2c3"
	if verb == "resume" {
		short = "Resume a paused schedule: it fires from now on, owing nothing for the pause"
		example = "  baton schedule resume 0193a1b2c3"
	}
	return &cobra.Command{
		Use:               verb + " ID",
		Short:             short,
		Example:           example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "schedule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, team, sc, err := readSchedule(cmd, env, args[0])
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case sc.Status == status:
				fmt.Fprintf(out, "Schedule %s is %s already.\n", sc.ID, map[string]string{"active": "active", "inactive": "paused"}[status])
				return nil
			case sc.Status == "archived":
				return fmt.Errorf("schedule %s is archived (it, or its workflow, was deleted): archived schedules are read-only", sc.ID)
			}
			sc.Status = status
			saved, err := s.client.ApplySchedule(cmd.Context(), team, sc)
			if err != nil {
				return s.scheduleHint(err, team)
			}
			say := fmt.Sprintf("Schedule %s of %s paused.", saved.ID, saved.WorkflowRef)
			if status == "active" {
				say = fmt.Sprintf("Schedule %s of %s resumed", saved.ID, saved.WorkflowRef)
				if saved.TriggerDisabled {
					say += ", but it does not fire while the workflow's schedule trigger is disabled.\n" + triggerHint
				} else if !saved.NextScheduleDate.IsZero() {
					say += ": next fire " + inZone([]time.Time{saved.NextScheduleDate}, saved.Timezone)[0] + "."
				} else {
					say += "."
				}
			}
			fmt.Fprintln(out, say)
			return nil
		},
	}
}

func newScheduleBackfillCmd(env *Env) *cobra.Command {
	var from, to, output string
	cmd := &cobra.Command{
		Use:   "backfill ID --from TIME --to TIME",
		Short: "Make the runs a schedule would have made in a past window",
		Long: `Submits one run per fire time of the schedule between --from and --to (a past window of
at most 366 days and 1,000 fires), oldest first, as the schedule itself would have. A fire
that made its run already, live or by an earlier backfill, makes none again, so a backfill
can be repeated. Times are RFC 3339, YYYY-MM-DD or YYYY-MM-DDTHH:MM in the schedule's time
zone, or now.`,
		Example: `  baton schedule backfill 0193a1b2c3 --from 2026-12-01 --to 2026-12-03
  baton schedule backfill 0193a1b2c3 --from 2026-12-06T00:00 --to now`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "schedule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := printer.ParseFormat(output)
			if err != nil {
				return err
			}
			if from == "" || to == "" {
				return fmt.Errorf("give the window: --from TIME --to TIME")
			}
			s, team, sc, err := readSchedule(cmd, env, args[0])
			if err != nil {
				return err
			}
			loc, err := time.LoadLocation(sc.Timezone)
			if err != nil {
				loc = time.UTC
			}
			start, err := parseTime(from, loc)
			if err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			end, err := parseTime(to, loc)
			if err != nil {
				return fmt.Errorf("--to: %w", err)
			}
			if end.Before(start) {
				return fmt.Errorf("--to %s is before --from %s", to, from)
			}
			res, err := s.client.BackfillSchedule(cmd.Context(), team, sc.ID, start, end)
			if err != nil {
				return s.scheduleHint(err, team)
			}
			if format == printer.JSON || format == printer.YAML {
				return printer.Object(cmd.OutOrStdout(), printer.New(format), res, nil)
			}
			window := strings.Join(inZone([]time.Time{start, end}, sc.Timezone), " to ")
			out := cmd.OutOrStdout()
			switch {
			case res.Runs == 0:
				fmt.Fprintf(out, "Schedule %s of %s does not fire from %s: no run started.\n", sc.ID, sc.WorkflowRef, window)
			default:
				fmt.Fprintf(out, "Schedule %s of %s fires %s from %s: %s started, %d made before.\n",
					sc.ID, sc.WorkflowRef, plural(res.Runs, "time"), window, plural(res.Created, "run"), res.Runs-res.Created)
				if res.Created > 0 {
					fmt.Fprintf(out, "See them with: baton run list %s --trigger schedule\n", sc.WorkflowRef)
				}
			}
			return nil
		},
	}
	addOutputFlag(cmd, &output)
	cmd.Flags().StringVar(&from, "from", "", "the window's start")
	cmd.Flags().StringVar(&to, "to", "", "the window's end, now at the latest")
	return cmd
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func newScheduleDeleteCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:               "delete ID",
		Aliases:           []string{"rm"},
		Short:             "Delete a schedule; runs it made are kept",
		Example:           "  baton schedule delete 0193a1b2c3",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: namesOf(env, "schedule"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, team, id, err := connectIn(cmd, env, args[0])
			if err != nil {
				return err
			}
			if err := s.client.DeleteSchedule(cmd.Context(), team, id); err != nil {
				return s.scheduleHint(err, team)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Schedule %s deleted: it fires no more, and is kept archived, read-only.\n", id)
			return nil
		},
	}
}

// triggerHint says how to turn a workflow's schedule trigger on.
const triggerHint = "Turn it on with triggers: {schedule: {enabled: true}} in the workflow, and baton apply -f FILE."

// scheduleHint adds to a schedule's error where to look for the right one.
func (s *session) scheduleHint(err error, team string) error {
	if client.HasReason(err, "SCHEDULE_NOT_FOUND") {
		return fmt.Errorf("%w\nbaton schedule list --team %s lists the team's schedules", err, team)
	}
	if client.HasReason(err, "WORKFLOWRUN_TRIGGER_DISABLED") {
		return fmt.Errorf("%w\n%s", err, triggerHint)
	}
	if client.HasReason(err, "WORKFLOW_NOT_FOUND") {
		return fmt.Errorf("%w\nbaton get workflows --team %s lists the team's workflows", err, team)
	}
	return s.hint(err)
}

// parseTime reads a time given on the command line: RFC 3339, YYYY-MM-DD, YYYY-MM-DDTHH:MM
// (or with a space), the last three in loc; or now.
func parseTime(s string, loc *time.Location) (time.Time, error) {
	if strings.EqualFold(s, "now") {
		return time.Now(), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is no time: write RFC 3339 (2026-12-01T09:00:00Z), YYYY-MM-DD, YYYY-MM-DDTHH:MM or now", s)
}

// readSchedule connects and reads schedule arg, ID or TEAM/ID, with the hint an unknown
// one deserves.
func readSchedule(cmd *cobra.Command, env *Env, arg string) (*session, string, *client.WorkflowSchedule, error) {
	s, team, id, err := connectIn(cmd, env, arg)
	if err != nil {
		return nil, "", nil, err
	}
	sc, err := s.client.GetSchedule(cmd.Context(), team, id)
	if err != nil {
		return nil, "", nil, s.scheduleHint(err, team)
	}
	return s, team, sc, nil
}
