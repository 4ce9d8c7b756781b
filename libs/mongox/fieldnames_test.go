package mongox_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/mongox"
)

func TestFieldNames(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give map[string]string
		want map[string]string
	}{
		{"none", nil, nil},
		{"plain keys stay", map[string]string{"env": "prod"}, map[string]string{"env": "prod"}},
		{"dots", map[string]string{"app.kubernetes.io/name": "x", "a.b.c": "y"},
			map[string]string{"app\uff0ekubernetes\uff0eio/name": "x", "a\uff0eb\uff0ec": "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := mongox.FieldNames(tt.give)
			assert.Equal(t, tt.want, got)
			for k := range got {
				assert.NotContains(t, k, ".")
			}
			assert.Equal(t, tt.give, mongox.FieldKeys(got))
		})
	}
}
