package paramref_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/paramref"
)

func TestPrefix(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"global.params.x)":   paramref.GlobalParams,
		"params.x)":          paramref.Params,
		"team.params.x)":     paramref.TeamParams,
		"workflow.params.x)": paramref.WorkflowParams,
		"context.params.x)":  paramref.ContextParams,
		"tasks.a.results.b)": paramref.Tasks,
		"results.x.path)":    paramref.Results,
		"date)":              "",
		"globalparams.x)":    "",
	}
	for s, want := range tests {
		assert.Equal(t, want, paramref.Prefix(s), s)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want int
	}{
		{`$(params.x)`, 10},
		{`$(params.m["a)b"]) tail)`, 17},
		{`$(params.m['a)b'])`, 17},
		{`$(params.x`, -1},
		{`$(params.m["a)`, -1},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, paramref.Close(tt.s, 2), tt.s)
	}
}
