// Package printer writes what a read command shows, in the format -o asks for: table
// (aligned columns, times relative), wide (more columns, times relative and absolute), json
// or yaml (the API's objects as they are, camelCase field names included).
package printer

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"go.yaml.in/yaml/v3"
)

// Format is an output format.
type Format string

// The formats -o takes.
const (
	Table Format = "table"
	Wide  Format = "wide"
	JSON  Format = "json"
	YAML  Format = "yaml"
)

// Formats lists the formats, for flags' help and completion.
var Formats = []string{string(Table), string(Wide), string(JSON), string(YAML)}

// ParseFormat reads a -o value; empty is Table.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case "":
		return Table, nil
	case Table, Wide, JSON, YAML:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(Formats, ", "))
}

// Column is one column of a table of rows of type R.
type Column[R any] struct {
	Header string
	// Wide columns are shown only in the wide format.
	Wide  bool
	Value func(p *Printer, row R) string
}

// Printer prints in one format.
type Printer struct {
	Format Format
	// Now is the time relative times are counted from.
	Now func() time.Time
}

// New returns a printer of format f counting times from the clock.
func New(f Format) *Printer { return &Printer{Format: f, Now: time.Now} }

// Print writes raw (the API's object or list, as it was answered) in json or yaml, or rows
// as a table of cols.
func Print[R any](w io.Writer, p *Printer, raw any, rows []R, cols []Column[R]) error {
	switch p.Format {
	case JSON:
		return WriteJSON(w, raw)
	case YAML:
		return WriteYAML(w, raw)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	var shown []Column[R]
	for _, c := range cols {
		if !c.Wide || p.Format == Wide {
			shown = append(shown, c)
		}
	}
	cells := make([]string, len(shown))
	for i, c := range shown {
		cells[i] = c.Header
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
	for _, r := range rows {
		for i, c := range shown {
			v := c.Value(p, r)
			if v == "" {
				v = "-"
			}
			cells[i] = strings.NewReplacer("\t", " ", "\n", " ").Replace(v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Object writes one object: json or yaml as it is; in table and wide, fields as
// "Name:  value" lines (a describe), a field without a name continuing the one above,
// and a field without a value left out.
func Object(w io.Writer, p *Printer, raw any, fields [][2]string) error {
	switch p.Format {
	case JSON:
		return WriteJSON(w, raw)
	case YAML:
		return WriteYAML(w, raw)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		if f[0] == "" { // a further line of the field above
			fmt.Fprintf(tw, "\t%s\n", f[1])
			continue
		}
		fmt.Fprintf(tw, "%s:\t%s\n", f[0], f[1])
	}
	return tw.Flush()
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteYAML writes v as YAML with the field names of its JSON form: it goes through JSON
// first, so a Go type prints as the API names its fields, not as its Go fields.
func WriteYAML(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	// JSON is YAML: parsed as a node tree, the API's field order is kept.
	var node yaml.Node
	if err := yaml.Unmarshal(raw, &node); err != nil {
		return err
	}
	styleBlock(&node)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&node); err != nil {
		return err
	}
	return enc.Close()
}

// styleBlock turns the flow style a JSON document parses into back to YAML's block style,
// keeping the field order the API answered in.
func styleBlock(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Style&yaml.DoubleQuotedStyle != 0 && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		styleBlock(c)
	}
}

// Time writes t relative to now in table ("5m ago"), relative and absolute in wide.
func (p *Printer) Time(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	rel := Relative(p.Now().Sub(t))
	if p.Format == Wide {
		return rel + " (" + t.UTC().Format(time.RFC3339) + ")"
	}
	return rel
}

// Relative writes how long ago d was: "just now", "45s ago", "5m ago", "3h ago", "2d ago";
// a negative d is in the future ("in 5m").
func Relative(d time.Duration) string {
	if d < 0 {
		return "in " + Short(-d)
	}
	if d < time.Second {
		return "just now"
	}
	return Short(d) + " ago"
}

// Short writes a duration with its one or two largest units: "850ms", "45s", "5m02s",
// "3h05m", "2d04h".
func Short(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
