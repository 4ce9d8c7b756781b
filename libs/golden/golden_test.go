package golden_test

import (
	"encoding/json"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/golden"
)

type sample struct {
	Name  string          `json:"name"`
	Tags  []string        `json:"tags,omitempty"`
	Extra json.RawMessage `json:"extra,omitempty"`
}

func cases() []golden.Case {
	return []golden.Case{
		{Name: "sample", Value: sample{Name: "build", Tags: []string{"a", "b"}, Extra: json.RawMessage(`{"x":[1,2]}`)}},
		{Name: "empty", Value: sample{}},
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	golden.Check(t, cases())
}

func TestNoStaleFixtures(t *testing.T) {
	t.Parallel()
	golden.NoStale(t, golden.Names(cases()))
}

// recorder is a test that notes a failure instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) FailNow()              { r.failed = true }

func TestFailures(t *testing.T) {
	t.Parallel()
	if flag.Lookup("update").Value.String() == "true" {
		t.Skip("the cases would write their fixtures")
	}
	tests := []struct {
		name string
		run  func(testing.TB)
		want bool
	}{
		{"matching encoding", func(t testing.TB) { golden.Match(t, "empty", []byte(`{"name":""}`)) }, false},
		{"changed encoding", func(t testing.TB) { golden.Match(t, "empty", []byte(`{"name":"x"}`)) }, true},
		{"same members, other order", func(t testing.TB) {
			golden.Match(t, "sample", []byte(`{"tags":["a","b"],"name":"build","extra":{"x":[1,2]}}`))
		}, true},
		{"no fixture", func(t testing.TB) { golden.Match(t, "missing", []byte(`{}`)) }, true},
		{"every fixture has a case", func(t testing.TB) { golden.NoStale(t, []string{"sample", "empty", "more"}) }, false},
		{"a fixture without a case", func(t testing.TB) { golden.NoStale(t, []string{"sample"}) }, true},
	}
	for _, tt := range tests {
		r := &recorder{TB: t}
		tt.run(r)
		assert.Equal(t, tt.want, r.failed, tt.name)
	}
}
