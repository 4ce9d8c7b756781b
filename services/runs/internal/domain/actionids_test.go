package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestActionIDsHoldNoDot(t *testing.T) {
	t.Parallel()
	run := "0193a5b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b"
	id := ActionID(TaskRunID(run, 12), 3)
	assert.Equal(t, run+"-12-3", id)
	assert.NotContains(t, id, ".")
	assert.Equal(t, id, PublicActionID(run+".12-3"), "an action stored under the old id answers the new one")
	assert.Equal(t, id, PublicActionID(id))
}

func TestLegacyActionID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, give, want string
		ok               bool
	}{
		{"a run's uuid", "0193a5b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b-12-3", "0193a5b2-7c1d-7e4f-8a9b-0c1d2e3f4a5b.12-3", true},
		{"a plain run id", "run-0-1", "run.0-1", true},
		{"an old id already", "run.0-1", "", false},
		{"no attempt", "run-0-", "", false},
		{"no index", "run--1", "", false},
		{"not numbers", "run-a-b", "", false},
		{"one dash", "run-1", "", false},
		{"empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := LegacyActionID(tt.give)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
