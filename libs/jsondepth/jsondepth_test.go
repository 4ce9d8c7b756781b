package jsondepth_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/jsondepth"
)

func TestExceeds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		raw   string
		limit int
		want  bool
	}{
		{"scalar", `42`, 0, false},
		{"at the limit", `{"a":[{"b":1}]}`, 3, false},
		{"past the limit", `{"a":[{"b":[1]}]}`, 3, true},
		{"brackets in strings do not count", `{"a":"[[[[{{{{"}`, 1, false},
		{"escaped quotes stay in the string", `{"a":"\"[[[["}`, 1, false},
		{"a million brackets", strings.Repeat("[", 1_000_000), 64, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, jsondepth.Exceeds([]byte(tt.raw), tt.limit))
		})
	}
}
