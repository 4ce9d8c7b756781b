package domain

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHolds(t *testing.T) {
	t.Parallel()
	var push any
	dec := json.NewDecoder(strings.NewReader(`{"ref":"refs/heads/main","repository":{"name":"baton","private":false,"stars":42},
		"commits":[{"id":"a1","message":"fix"},{"id":"b2","message":"feat: x"}],"labels":["x","y"],"n":null}`))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&push))
	tests := []struct {
		name  string
		conds []Condition
		want  string // "" when they hold, else a piece of the reason
	}{
		{"none", nil, ""},
		{"equals", []Condition{{Field: "$.ref", Operation: "equals", Value: "refs/heads/main"}}, ""},
		{"equals without operation", []Condition{{Field: "$.ref", Value: "refs/heads/main"}}, ""},
		{"equals differs", []Condition{{Field: "$.ref", Operation: "equals", Value: "refs/heads/dev"}}, "does not hold"},
		{"bare field", []Condition{{Field: "repository.name", Operation: "equals", Value: "baton"}}, ""},
		{"number", []Condition{{Field: "$.repository.stars", Operation: "equals", Value: "42"}}, ""},
		{"bool", []Condition{{Field: "$.repository.private", Operation: "equals", Value: "false"}}, ""},
		{"null", []Condition{{Field: "$.n", Operation: "equals", Value: "null"}}, ""},
		{"any of many", []Condition{{Field: "$.commits[*].message", Operation: "matches", Value: "feat:.*"}}, ""},
		{"full match only", []Condition{{Field: "$.ref", Operation: "matches", Value: "main"}}, "does not hold"},
		{"matches", []Condition{{Field: "$.ref", Operation: "matches", Value: "refs/heads/(main|release-.*)"}}, ""},
		{"in", []Condition{{Field: "$.labels[0]", Operation: "in", Values: []string{"y", "x"}}}, ""},
		{"not in", []Condition{{Field: "$.ref", Operation: "in", Values: []string{"a", "b"}}}, "does not hold"},
		{"object compares as JSON", []Condition{{Field: "$.labels", Operation: "equals", Value: `["x","y"]`}}, ""},
		{"missing", []Condition{{Field: "$.action", Operation: "equals", Value: "opened"}}, "selects nothing"},
		{"all must hold", []Condition{{Field: "$.ref", Value: "refs/heads/main"}, {Field: "$.repository.name", Value: "other"}}, "condition 2"},
		{"bad path", []Condition{{Field: "$[", Operation: "equals", Value: "x"}}, "not a JSONPath"},
		{"bad pattern", []Condition{{Field: "$.ref", Operation: "matches", Value: "(("}}, "not RE2"},
		{"bad operation", []Condition{{Field: "$.ref", Operation: "like", Value: "x"}}, "unknown operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Holds(tt.conds, push)
			if tt.want == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
