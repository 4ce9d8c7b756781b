package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

const formPW = "f0rm-d3fault"

// manualTask is a manual task whose form, given in param, is form.
func manualTask(param, form string) domain.Task {
	return domain.Task{Name: "ask", Type: "manual", Params: []domain.TaskParam{
		{Name: "instructions", Value: json.RawMessage(`"say yes"`)},
		{Name: param, Value: json.RawMessage(form)},
	}}
}

func asText(form string) string {
	b, _ := json.Marshal(form)
	return string(b)
}

// A manual task's form that gives a password field a default or a value reads it masked,
// in a workflow read as decoded tasks or as stored bytes; other fields and tasks stay.
func TestFormSecretsMasked(t *testing.T) {
	t.Parallel()
	pwDefault := `[{"name":"who","type":"text","default":"ann"},{"name":"pw","type":"password","default":"` + formPW + `"}]`
	tests := []struct {
		name   string
		task   domain.Task
		secret bool
	}{
		{"a password default", manualTask("params", pwDefault), true},
		{"under the form alias", manualTask("form", pwDefault), true},
		{"v4's defaultValue, its value too", manualTask("params", `[{"key":"pw","Type":"password","defaultValue":"`+formPW+`","value":"`+formPW+`"}]`), true},
		{"as JSON text", manualTask("params", asText(pwDefault)), true},
		{"a text default", manualTask("params", `[{"name":"who","type":"text","default":"`+formPW+`"}]`), false},
		{"a password without a default", manualTask("params", `[{"name":"pw","type":"password"}]`), false},
		{"not a manual task", func() domain.Task { t := manualTask("params", pwDefault); t.Type = "custom"; return t }(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := json.Marshal([]domain.Task{tt.task})
			require.NoError(t, err)
			for _, w := range []domain.Workflow{{Name: "w", Tasks: []domain.Task{tt.task}}, {Name: "w", RawTasks: raw}} {
				orig := string(tt.task.Params[1].Value)
				w.MaskSecrets()
				out, err := json.Marshal(w)
				require.NoError(t, err)
				if !tt.secret {
					assert.Contains(t, string(out), orig, "answered as it is")
					assert.NotContains(t, string(out), domain.Mask)
					continue
				}
				assert.NotContains(t, string(out), formPW)
				assert.Contains(t, string(out), domain.Mask)
				assert.Contains(t, string(out), "say yes")
				assert.Equal(t, orig, string(tt.task.Params[1].Value), "the task masked is a copy")
			}
		})
	}
}

// A write that sends a form's masked password default back keeps the stored one; a mask
// with nothing stored for it is no value, and a new default replaces the stored one.
func TestFormSecretsKept(t *testing.T) {
	t.Parallel()
	form := func(def string) string {
		return `[{"name":"who","type":"text"},{"name":"pw","type":"password","default":` + def + `}]`
	}
	masked := `"` + domain.Mask + `"`
	tests := []struct {
		name string
		prev []domain.Task
		give domain.Task
		want string
	}{
		{"the mask sent back", []domain.Task{manualTask("params", form(`"`+formPW+`"`))}, manualTask("params", form(masked)), formPW},
		{"as JSON text", []domain.Task{manualTask("params", asText(form(`"`+formPW+`"`)))}, manualTask("params", asText(form(masked))), formPW},
		{"under the other alias", []domain.Task{manualTask("form", form(`"`+formPW+`"`))}, manualTask("params", form(masked)), formPW},
		{"a new default", []domain.Task{manualTask("params", form(`"`+formPW+`"`))}, manualTask("params", form(`"n3w"`)), "n3w"},
		{"nothing stored", nil, manualTask("params", form(masked)), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := domain.Workflow{Name: "w", Tasks: []domain.Task{tt.give}}
			if w.HasMaskedSecrets() {
				w.KeepTaskSecrets(tt.prev)
			}
			assert.False(t, w.HasMaskedSecrets())
			got := domain.FormSecrets(w.Tasks)
			if tt.want == "" {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			for s, v := range got {
				assert.Equal(t, domain.FormSecret{Task: "ask", Param: "params", Field: "pw", Member: "default"}, s)
				assert.JSONEq(t, `"`+tt.want+`"`, string(v))
			}
		})
	}
}
