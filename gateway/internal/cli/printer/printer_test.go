package printer_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli/printer"
	"github.com/baton-flow/baton/libs/golden"
)

type workflow struct {
	Name         string            `json:"name"`
	DisplayName  string            `json:"displayName,omitempty"`
	Status       string            `json:"status"`
	Version      int               `json:"version"`
	CreationDate time.Time         `json:"creationDate"`
	Labels       map[string]string `json:"labels,omitempty"`
}

var now = time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)

func rows() []workflow {
	return []workflow{
		{Name: "deploy", DisplayName: "Deploy to production", Status: "active", Version: 3, CreationDate: now.Add(-90 * time.Minute), Labels: map[string]string{"env": "prod"}},
		{Name: "nightly-backup", Status: "inactive", Version: 12, CreationDate: now.Add(-50 * time.Hour)},
	}
}

var cols = []printer.Column[workflow]{
	{Header: "NAME", Value: func(_ *printer.Printer, w workflow) string { return w.Name }},
	{Header: "STATUS", Value: func(_ *printer.Printer, w workflow) string { return w.Status }},
	{Header: "DISPLAY NAME", Wide: true, Value: func(_ *printer.Printer, w workflow) string { return w.DisplayName }},
	{Header: "CREATED", Value: func(p *printer.Printer, w workflow) string { return p.Time(w.CreationDate) }},
}

// TestPrint pins each format's output: tables aligned, an empty cell shown as -, wide
// columns and absolute times only in wide, json and yaml the objects with their API names.
func TestPrint(t *testing.T) {
	t.Parallel()
	for _, f := range printer.Formats {
		t.Run(f, func(t *testing.T) {
			t.Parallel()
			format, err := printer.ParseFormat(f)
			require.NoError(t, err)
			var out bytes.Buffer
			p := &printer.Printer{Format: format, Now: func() time.Time { return now }}
			require.NoError(t, printer.Print(&out, p, rows(), rows(), cols))
			golden.MatchText(t, "workflows-"+f, out.Bytes())
		})
	}
}

func TestParseFormat(t *testing.T) {
	t.Parallel()
	f, err := printer.ParseFormat("")
	require.NoError(t, err)
	assert.Equal(t, printer.Table, f)
	f, err = printer.ParseFormat("YAML")
	require.NoError(t, err)
	assert.Equal(t, printer.YAML, f)
	_, err = printer.ParseFormat("xml")
	require.ErrorContains(t, err, "table, wide, json, yaml")
}

func TestRelative(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give time.Duration
		want string
	}{
		{0, "just now"},
		{45 * time.Second, "45s ago"},
		{5*time.Minute + 2*time.Second, "5m02s ago"},
		{3*time.Hour + 5*time.Minute, "3h05m ago"},
		{52 * time.Hour, "2d04h ago"},
		{-5 * time.Minute, "in 5m00s"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, printer.Relative(tt.give), tt.give.String())
	}
}
