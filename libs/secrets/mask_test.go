package secrets_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/secrets"
)

func TestMasker(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values []string
		give   string
		want   string
	}{
		{"none", nil, "pass hunter2", "pass hunter2"},
		{"only empty values", []string{"", ""}, "pass hunter2", "pass hunter2"},
		{"one, twice", []string{"hunter2"}, "hunter2 and hunter2", "******** and ********"},
		{"the longer whole", []string{"pw", "token=pw"}, "got token=pw and pw", "got ******** and ********"},
		{"repeated values", []string{"pw", "pw", "x", "pw"}, "pw x", "******** ********"},
		{"empty text", []string{"pw"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := secrets.NewMasker(tt.values)
			assert.Equal(t, tt.want, m.Mask(tt.give))
			assert.Equal(t, tt.want, secrets.MaskText(tt.give, tt.values))
		})
	}
	assert.Equal(t, "x", secrets.Masker{}.Mask("x"), "the zero Masker hides nothing")
}
