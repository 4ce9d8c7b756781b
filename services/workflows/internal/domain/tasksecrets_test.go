package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// A value given to a param its catalogue task declares password is marked on save, read
// masked, and kept when a write sends the mask back; other params are left alone.
func TestTaskPasswordParams(t *testing.T) {
	t.Parallel()
	def := domain.TaskDefinition{Name: "login", Params: []domain.Param{{Name: "token", Type: "password"}, {Name: "user", Type: "text"}}}
	task := func(token string) domain.Task {
		return domain.Task{Name: "call", Type: "template", TaskRef: "login", Params: []domain.TaskParam{
			{Name: "user", Value: json.RawMessage(`"ann"`)}, {Name: "token", Value: json.RawMessage(token)},
		}}
	}
	tests := []struct {
		name string
		prev []domain.Task
		give string
		want string
	}{
		{"a new value", nil, `"t0ken"`, `"t0ken"`},
		{"the mask sent back", []domain.Task{task(`"t0ken"`)}, `"********"`, `"t0ken"`},
		{"the mask with nothing stored", nil, `"********"`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := domain.Workflow{Name: "w", Tasks: []domain.Task{task(tt.give)}}
			domain.MarkSecretParams(&w.Tasks[0], def)
			require.True(t, w.Tasks[0].Params[1].Secret)
			require.False(t, w.Tasks[0].Params[0].Secret)
			if w.HasMaskedSecrets() {
				w.KeepTaskSecrets(tt.prev)
			}
			assert.Equal(t, tt.want, string(w.Tasks[0].Params[1].Value))

			saved := w.Clone()
			w.MaskSecrets()
			out, err := json.Marshal(w)
			require.NoError(t, err)
			assert.Contains(t, string(out), `"ann"`)
			if tt.want != "" {
				assert.Contains(t, string(out), `{"name":"token","value":"********"}`)
				assert.NotContains(t, string(out), "t0ken")
				assert.Equal(t, tt.want, string(saved.Tasks[0].Params[1].Value), "the workflow masked is a copy")
			}
		})
	}
}

// A task param read sealed, as stored, is secret without the catalogue: tasks rendered as
// stored answer it masked.
func TestSealedTaskParamIsMasked(t *testing.T) {
	t.Parallel()
	raw := `[{"name":"call","type":"template","params":[{"name":"user","value":"ann"},{"name":"token","value":"enc:v1:AAAA"}]}]`
	w := domain.Workflow{Name: "w", RawTasks: json.RawMessage(raw)}
	w.MaskSecrets()
	out, err := json.Marshal(w)
	require.NoError(t, err)
	assert.Contains(t, string(out), `{"name":"token","value":"********"}`)
	assert.Contains(t, string(out), `{"name":"user","value":"ann"}`)
	assert.NotContains(t, string(out), "enc:v1:")

	assert.Nil(t, w.Tasks, "rendered as stored, but the task holding the secret")

	const other = `{"name":"other", "type":"script","params":[{"name":"script","value":"echo"}]}`
	mixed := domain.Workflow{Name: "w", RawTasks: json.RawMessage(`[` + other + `,` + raw[1:])}
	mixed.MaskSecrets()
	assert.Contains(t, string(mixed.RawTasks), other, "a task holding no secret is kept as stored")
	assert.NotContains(t, string(mixed.RawTasks), "enc:v1:")

	plain := domain.Workflow{Name: "w", RawTasks: json.RawMessage(`[` + other + `]`)}
	plain.MaskSecrets()
	assert.Equal(t, `[`+other+`]`, string(plain.RawTasks), "tasks that hold no secret are rendered as stored")
}
