package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSecretTexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give any
		want []string
	}{
		{"nothing", nil, nil},
		{"empty", "", nil},
		{"a string", "hunter2", []string{"hunter2"}},
		{"a short string whole", "pw", []string{"pw"}},
		{"a number", 42.0, []string{"42"}},
		{"an object and its strings", map[string]any{"user": "ann", "pass": "hunter2", "port": 22.0},
			[]string{`{"pass":"hunter2","port":22,"user":"ann"}`, "hunter2"}},
		{"a list, deep", []any{"s3cret-a", map[string]any{"k": []any{"s3cret-b", "s3cret-a"}}},
			[]string{`["s3cret-a",{"k":["s3cret-b","s3cret-a"]}]`, "s3cret-a", "s3cret-b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, SecretTexts(tt.give))
		})
	}
}
