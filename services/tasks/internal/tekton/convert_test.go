package tekton

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// A parameter's UI definition and its Tekton form together give the parameter back,
// whatever JSON type its default has.
func TestParamsSurviveTheirTektonForm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		give     domain.Param
		wantType string
		wantDef  *value
	}{
		{"text", domain.Param{Name: "a", Type: "text", Default: raw(`"x"`)}, typeString, &value{Type: typeString, String: "x"}},
		{"number default", domain.Param{Name: "a", Type: "number", Default: raw(`5`)}, typeString, &value{Type: typeString, String: "5"}},
		{"boolean default", domain.Param{Name: "a", Type: "boolean", Default: raw(`false`)}, typeString, &value{Type: typeString, String: "false"}},
		{"json default", domain.Param{Name: "a", Type: "json", Default: raw(`{"k":[1,2]}`)}, typeString, &value{Type: typeString, String: `{"k":[1,2]}`}},
		{"multiselect", domain.Param{Name: "a", Type: "multiselect", Default: raw(`["x","y"]`)}, typeArray, &value{Type: typeArray, Array: []string{"x", "y"}}},
		{"multiselect with a text default", domain.Param{Name: "a", Type: "multiselect", Default: raw(`"x,y"`)}, typeArray, nil},
		{"object", domain.Param{Name: "a", Type: "json", Default: raw(`{"k":"v"}`), Extra: map[string]json.RawMessage{"properties": raw(`{"k":{"type":"string"}}`)}},
			typeObject, &value{Type: typeObject, Object: map[string]string{"k": "v"}}},
		{"no default, every UI field", domain.Param{
			Name: "a", Label: "A", Description: "d", Type: "select", Required: true, Placeholder: "p", HelperText: "h",
			Options: []domain.ParamOption{{Key: "k", Value: "v"}}, MinValueLength: new(1), MaxValueLength: new(3),
			ReadOnly: true, HiddenValue: true, Value: raw(`"k"`), Extra: map[string]json.RawMessage{"ui": raw(`{"w":1}`)},
		}, typeString, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tp := tektonParam(tt.give)
			assert.Equal(t, tt.wantType, tp.Type)
			assert.Equal(t, tt.wantDef, tp.Default)
			back := paramFromTekton(tp, &tt.give)
			assert.Equal(t, jsonOf(t, tt.give), jsonOf(t, back))
		})
	}
}

// An edit of the Tekton form wins over the definition carried in the annotation.
func TestTektonEditsWin(t *testing.T) {
	t.Parallel()
	def := domain.Param{Name: "a", Type: "number", Default: raw(`5`), Description: "old", Label: "A"}
	got := paramFromTekton(param{Name: "a", Type: typeString, Description: "new", Default: &value{Type: typeString, String: "6"}}, &def)
	assert.Equal(t, domain.Param{Name: "a", Type: "number", Default: raw(`"6"`), Description: "new", Label: "A"}, got)
	got = paramFromTekton(param{Name: "a", Type: typeArray}, &def)
	assert.Equal(t, domain.Param{Name: "a", Type: "multiselect", Label: "A"}, got)
}

func jsonOf(t *testing.T, p domain.Param) string {
	t.Helper()
	b, err := json.Marshal(taskjson.ParamFromDomain(p))
	require.NoError(t, err)
	return string(b)
}

// What Encode writes, Decode reads back to the same task, and writing it again gives the
// same YAML.
func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	for _, want := range domain.Catalogue() {
		t.Run(want.Name, func(t *testing.T) {
			t.Parallel()
			want.Normalize()
			y, err := Encode(want)
			require.NoError(t, err)
			got, problems, decoded, err := parse(y)
			require.NoError(t, err)
			require.True(t, decoded)
			require.Empty(t, problems)
			wantJSON, err := taskjson.Encode(want)
			require.NoError(t, err)
			gotJSON, err := taskjson.Encode(got)
			require.NoError(t, err)
			assert.JSONEq(t, string(wantJSON), string(gotJSON))
			again, err := Encode(got)
			require.NoError(t, err)
			assert.Equal(t, string(y), string(again))
		})
	}
}
