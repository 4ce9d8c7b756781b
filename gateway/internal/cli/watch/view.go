package watch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
)

// View draws a run's states on Out.
type View struct {
	Out io.Writer
	// TTY redraws the view in place; otherwise each change is one line.
	TTY bool
	// Color colours statuses (only with TTY).
	Color bool
	// Width, when known, cuts the lines to the terminal's width so that none wraps (a
	// wrapped line would throw the redraw off).
	Width int
	// Height, when known, bounds a frame to the terminal's height, less a line: a frame
	// taller than the screen scrolls, and the cursor cannot go back up to redraw it. Tasks
	// that ended well or have not started are the first left out, then summed up on a line.
	Height int
	// Resize, when set, gives the terminal's width and height before each redraw.
	Resize func() (width, height int)
	Now    func() time.Time

	drawn int // lines of the last frame
	// Of the line-per-change output: the run's and each task's last status and wait.
	runStatus string
	tasks     map[string]string
}

// Show draws r.
func (v *View) Show(r Run) error {
	if v.TTY {
		return v.redraw(r)
	}
	return v.lines(r)
}

// End draws r, the run's last state, for the last time.
func (v *View) End(r Run) error {
	if v.TTY {
		return v.redraw(r)
	}
	return nil
}

func (v *View) redraw(r Run) error {
	if v.Resize != nil {
		v.Width, v.Height = v.Resize()
	}
	var b strings.Builder
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", v.drawn)
	}
	b.WriteString("\r\x1b[J")
	frame := v.Frame(r)
	for _, l := range frame {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	v.drawn = len(frame)
	_, err := io.WriteString(v.Out, b.String())
	return err
}

// Frame is the view of r as lines: the run's header, then one line a task, in the DAG's
// order, each indented by its depth.
func (v *View) Frame(r Run) []string {
	now := v.Now()
	head := fmt.Sprintf("%s  run %s", workflowName(r), r.ID)
	lines := []string{v.fit(head, "", "")}
	status := r.Status
	if status == "" {
		status = "notstarted"
	}
	elapsed := ""
	if e := runElapsed(r, now); e > 0 {
		elapsed = "  " + printer.Short(e)
	}
	msg := ""
	if r.StatusMessage != "" && Ended(r.Status) {
		msg = "  " + r.StatusMessage
	}
	lines = append(lines, v.fit("Status: ", status, elapsed+msg))

	order, depth := dagOrder(r.Tasks)
	order, hidden := v.fitHeight(order, len(lines))
	nameWidth := 0
	for _, t := range order {
		nameWidth = max(nameWidth, 2*depth[t.Name]+utf8.RuneCountInString(t.Name))
	}
	for _, t := range order {
		st := t.Status
		if st == "" {
			st = "notstarted"
		}
		name := strings.Repeat("  ", depth[t.Name]) + t.Name
		prefix := fmt.Sprintf("  %s %-*s  ", symbol(st), nameWidth, name)
		rest := ""
		if d := taskElapsed(t, now); d > 0 {
			rest = printer.Short(d)
		}
		rest = fmt.Sprintf("%-7s", rest)
		if st == "waiting" {
			rest += "  " + WaitingFor(t, now)
		} else if len(t.Dependencies) > 1 {
			rest += "  after " + strings.Join(t.Dependencies, ", ")
		}
		if t.Message != "" && (st == "failed" || st == "invalid") {
			rest += "  " + t.Message
		}
		lines = append(lines, v.fit(prefix, fmt.Sprintf("%-10s", st), "  "+strings.TrimRight(rest, " ")))
	}
	if hidden != "" {
		lines = append(lines, v.fit("  … "+hidden, "", ""))
	}
	return lines
}

// shownFirst ranks statuses for a frame too tall for the screen: what needs attention
// first, then what is under way, then what waits its turn, last what ended well.
func shownFirst(status string) int {
	switch status {
	case "failed", "invalid", "timedout", "cancelled":
		return 0
	case "waiting", "running":
		return 1
	case "ready", "notstarted", "":
		return 2
	}
	return 3
}

// fitHeight keeps of tasks, in their order, as many as the height leaves room for after
// the frame's first lines, and says what it left out ("12 more: 10 succeeded, 2 skipped").
func (v *View) fitHeight(tasks []Task, above int) ([]Task, string) {
	room := v.Height - 1 - above
	if v.Height <= 0 || len(tasks) <= room {
		return tasks, ""
	}
	room = max(room-1, 0) // the summing-up line
	ranked := make([]int, len(tasks))
	for i := range ranked {
		ranked[i] = i
	}
	slices.SortStableFunc(ranked, func(a, b int) int { return shownFirst(tasks[a].Status) - shownFirst(tasks[b].Status) })
	keep := make([]bool, len(tasks))
	for _, i := range ranked[:room] {
		keep[i] = true
	}
	var kept []Task
	counts := map[string]int{}
	var statuses []string
	for i, t := range tasks {
		if keep[i] {
			kept = append(kept, t)
			continue
		}
		st := cmp.Or(t.Status, "notstarted")
		if counts[st] == 0 {
			statuses = append(statuses, st)
		}
		counts[st]++
	}
	parts := make([]string, len(statuses))
	for i, st := range statuses {
		parts[i] = fmt.Sprintf("%d %s", counts[st], st)
	}
	return kept, fmt.Sprintf("%d more: %s", len(tasks)-len(kept), strings.Join(parts, ", "))
}

// fit joins a line's prefix, status (coloured) and rest, cut to the width.
func (v *View) fit(prefix, status, rest string) string {
	if v.Width > 0 {
		room := v.Width - 1
		for _, part := range []*string{&prefix, &status, &rest} {
			n := utf8.RuneCountInString(*part)
			if n > room {
				*part = string([]rune(*part)[:max(room, 0)])
				n = room
			}
			room -= n
		}
	}
	rest = strings.TrimRight(rest, " ")
	if status == "" {
		return strings.TrimRight(prefix+rest, " ")
	}
	if v.Color {
		if c := colour(strings.TrimSpace(status)); c != "" {
			status = c + status + "\x1b[0m"
		}
	}
	return strings.TrimRight(prefix+status+rest, " ")
}

// lines writes one line for each change since the last state: the run's status, and each
// task's status or wait.
func (v *View) lines(r Run) error {
	if v.tasks == nil {
		v.tasks = map[string]string{}
	}
	now := v.Now()
	stamp := now.UTC().Format("15:04:05")
	var b strings.Builder
	if v.runStatus == "" {
		fmt.Fprintf(&b, "%s  run %s of %s\n", stamp, r.ID, workflowName(r))
	}
	order, _ := dagOrder(r.Tasks)
	for _, t := range order {
		st := t.Status
		if st == "" {
			st = "notstarted"
		}
		say := st
		switch {
		case st == "waiting":
			say += " " + WaitingFor(t, now)
		case Ended(st) && t.Duration > 0:
			say += " (" + printer.Short(t.Duration) + ")"
		}
		if t.Message != "" && (st == "failed" || st == "invalid") {
			say += ": " + t.Message
		}
		key := st + "|" + WaitingFor(t, time.Time{})
		if v.tasks[t.Name] == key || (st == "notstarted" && v.tasks[t.Name] == "") {
			v.tasks[t.Name] = key
			continue
		}
		v.tasks[t.Name] = key
		fmt.Fprintf(&b, "%s  task %s %s\n", stamp, t.Name, say)
	}
	if r.Status != v.runStatus {
		v.runStatus = r.Status
		say := r.Status
		if Ended(r.Status) {
			if e := runElapsed(r, now); e > 0 {
				say += " (" + printer.Short(e) + ")"
			}
			if r.StatusMessage != "" {
				say += ": " + r.StatusMessage
			}
		}
		fmt.Fprintf(&b, "%s  run %s\n", stamp, say)
	}
	_, err := io.WriteString(v.Out, b.String())
	return err
}

// WaitingFor says what a waiting task waits for, to follow the word "waiting": an approval's
// approvers, a manual form's instructions, an event wait's topic, a lock's key, a sleep's
// end, a child run. now, when not zero, adds how long a sleep has left.
func WaitingFor(t Task, now time.Time) string {
	p := t.Params
	who := ""
	if len(t.Approvers) > 0 {
		who = " by " + strings.Join(t.Approvers, ", ")
	} else if g := first(p, "approverGroupRef", "approverGroupId"); g != "" {
		who = " by group " + g
	}
	switch t.Type {
	case "approval":
		n := first(p, "numberOfApprovers", "numberOfApprovals")
		s := "for approval" + who
		if n != "" && n != "1" {
			s += " (" + n + " approvals needed)"
		}
		return s
	case "manual":
		s := "for the manual form"
		if fields := formFields(p["params"]); fields != "" {
			s += " (" + fields + ")"
		}
		s += " to be completed" + who
		if i := p["instructions"]; i != "" {
			s += ": " + firstLine(i)
		}
		return s
	case "eventwait":
		return "for an event on topic " + strconv.Quote(p["topic"])
	case "acquirelock":
		return "for lock " + strconv.Quote(p["key"])
	case "sleep":
		ms, err := strconv.ParseInt(p["duration"], 10, 64)
		if err != nil || t.Start.IsZero() {
			return "while sleeping"
		}
		end := t.Start.Add(time.Duration(ms) * time.Millisecond)
		s := "until " + end.UTC().Format("15:04:05")
		if !now.IsZero() && end.After(now) {
			s += " (" + printer.Short(max(end.Sub(now).Round(time.Second), time.Second)) + " left)"
		}
		return s
	case "runworkflow":
		return "for a run of " + p["workflowRef"]
	case "generic":
		if q := p["queue"]; q != "" {
			return "for a worker on queue " + strconv.Quote(q)
		}
	}
	return ""
}

// formFields names the fields of a manual form, given as its JSON list of params.
func formFields(raw string) string {
	var fields []struct {
		Name string `json:"name"`
		Key  string `json:"key"`
	}
	if json.Unmarshal([]byte(raw), &fields) != nil {
		return ""
	}
	names := make([]string, 0, len(fields))
	for _, f := range fields {
		names = append(names, cmp.Or(f.Name, f.Key))
	}
	return strings.Join(names, ", ")
}

func first(p map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := p[k]; v != "" {
			return v
		}
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func workflowName(r Run) string {
	if r.Version > 0 {
		return fmt.Sprintf("%s v%d", r.Workflow, r.Version)
	}
	return r.Workflow
}

func runElapsed(r Run, now time.Time) time.Duration {
	if Ended(r.Status) || r.Start.IsZero() {
		return r.Duration
	}
	return now.Sub(r.Start)
}

func taskElapsed(t Task, now time.Time) time.Duration {
	if t.Status == "running" || t.Status == "waiting" {
		if !t.Start.IsZero() {
			return now.Sub(t.Start)
		}
		return 0
	}
	if Ended(t.Status) {
		return t.Duration
	}
	return 0 // not started: no time yet, whatever the server counts
}

// dagOrder puts tasks in the DAG's order and returns each one's depth (the longest path
// to it from a task without dependencies). Each task comes under the last of its deepest
// dependencies, as in a tree drawn depth first, so that its indentation says what it
// follows; the others it waits for are named on its line. Dependencies on unknown tasks and
// cycles are ignored rather than trusted: a view must draw whatever it is given.
func dagOrder(tasks []Task) ([]Task, map[string]int) {
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.Name] = i
	}
	depth := make(map[string]int, len(tasks))
	parent := make([]int, len(tasks))
	state := make([]int, len(tasks)) // 1 visiting, 2 done
	var visit func(i int) int
	visit = func(i int) int {
		switch state[i] {
		case 1:
			return -1
		case 2:
			return depth[tasks[i].Name]
		}
		state[i] = 1
		d, p := 0, -1
		for _, dep := range tasks[i].Dependencies {
			j, ok := index[dep]
			if !ok || j == i {
				continue
			}
			if dd := visit(j); dd >= 0 && dd+1 >= d {
				d, p = dd+1, j
			}
		}
		state[i] = 2
		depth[tasks[i].Name], parent[i] = d, p
		return d
	}
	children := make([][]int, len(tasks))
	var roots []int
	for i := range tasks {
		visit(i)
	}
	for i := range tasks {
		if parent[i] < 0 {
			roots = append(roots, i)
		} else {
			children[parent[i]] = append(children[parent[i]], i)
		}
	}
	order := make([]Task, 0, len(tasks))
	var walk func(i int)
	walk = func(i int) {
		order = append(order, tasks[i])
		for _, c := range children[i] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return order, depth
}

func symbol(status string) string {
	switch status {
	case "succeeded":
		return "✓"
	case "failed", "invalid":
		return "✗"
	case "running":
		return "●"
	case "waiting":
		return "◷"
	case "cancelled", "timedout":
		return "■"
	case "skipped":
		return "-"
	}
	return "○"
}

func colour(status string) string {
	switch status {
	case "succeeded":
		return "\x1b[32m"
	case "failed", "invalid", "timedout":
		return "\x1b[31m"
	case "running":
		return "\x1b[36m"
	case "waiting":
		return "\x1b[33m"
	case "cancelled":
		return "\x1b[35m"
	case "skipped", "notstarted", "ready":
		return "\x1b[2m"
	}
	return ""
}
