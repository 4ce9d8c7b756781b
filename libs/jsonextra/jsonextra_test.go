package jsonextra_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/jsonextra"
)

// task keeps unknown members the way the package documentation shows.
type task struct {
	Name    string                     `json:"name"`
	Retries int                        `json:"retries,omitempty"`
	Extra   map[string]json.RawMessage `json:"-"`
}

type plainTask task

var taskKeys = jsonextra.Keys(plainTask{})

func (t task) MarshalJSON() ([]byte, error) { return jsonextra.Marshal(plainTask(t), t.Extra) }

func (t *task) UnmarshalJSON(b []byte) (err error) {
	t.Extra, err = jsonextra.Unmarshal(b, (*plainTask)(t), taskKeys)
	return err
}

type Embedded struct {
	Inner string `json:"inner"`
}

func TestKeys(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give any
		want []string
	}{
		{"tag names lower-cased, options cut", struct {
			DisplayName string `json:"displayName,omitempty"`
			Version     int    `json:"version"`
		}{}, []string{"displayname", "version"}},
		{"untagged field by its Go name", struct{ RetryDelay int }{}, []string{"retrydelay"}},
		{"option-only tag by its Go name", struct {
			Icon string `json:",omitempty"`
		}{}, []string{"icon"}},
		{"skipped and unexported left out", struct {
			Extra  map[string]json.RawMessage `json:"-"`
			hidden int
			Dash   string `json:"-,"`
		}{}, []string{"-"}},
		{"embedded struct promoted", struct {
			Embedded
			Name string `json:"name"`
		}{}, []string{"inner", "name"}},
		{"tagged embedded struct is one member", struct {
			Embedded `json:"embedded"`
		}{}, []string{"embedded"}},
		{"pointer to a struct", &struct {
			Name string `json:"name"`
		}{}, []string{"name"}},
		{"no fields", struct{}{}, nil},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, jsonextra.Keys(tt.give), tt.name)
	}
}

func TestUnmarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		give      string
		want      task
		wantErr   bool
		wantAgain string
	}{
		{
			name:      "known members in any case",
			give:      `{"NAME":"build","Retries":2}`,
			want:      task{Name: "build", Retries: 2},
			wantAgain: `{"name":"build","retries":2}`,
		},
		{
			name: "unknown kept byte for byte, written back in name order",
			give: `{"zeta": [1, 2.50, "x"], "name":"build", "alpha" : {"b" :true}}`,
			want: task{Name: "build", Extra: map[string]json.RawMessage{
				"zeta": json.RawMessage(`[1, 2.50, "x"]`), "alpha": json.RawMessage(`{"b" :true}`)}},
			wantAgain: `{"name":"build","alpha":{"b" :true},"zeta":[1, 2.50, "x"]}`,
		},
		{
			name:      "unknown names keep their case",
			give:      `{"name":"a","Colour":"red","colour":"blue"}`,
			want:      task{Name: "a", Extra: map[string]json.RawMessage{"Colour": json.RawMessage(`"red"`), "colour": json.RawMessage(`"blue"`)}},
			wantAgain: `{"name":"a","Colour":"red","colour":"blue"}`,
		},
		{
			name:      "null unknown member kept",
			give:      `{"name":"a","note":null}`,
			want:      task{Name: "a", Extra: map[string]json.RawMessage{"note": json.RawMessage(`null`)}},
			wantAgain: `{"name":"a","note":null}`,
		},
		{name: "empty object", give: `{}`, want: task{}, wantAgain: `{"name":""}`},
		{name: "null", give: `null`, want: task{}, wantAgain: `{"name":""}`},
		{name: "not an object", give: `[1]`, wantErr: true},
		{name: "known member of the wrong type", give: `{"retries":"2"}`, wantErr: true},
		{name: "malformed", give: `{"name":`, wantErr: true},
	}
	for _, tt := range tests {
		var got task
		err := json.Unmarshal([]byte(tt.give), &got)
		if tt.wantErr {
			assert.Error(t, err, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
		// MarshalJSON itself, as json.Marshal would compact what it writes.
		again, err := got.MarshalJSON()
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.wantAgain, string(again), tt.name)
	}
}

func TestMarshal(t *testing.T) {
	t.Parallel()
	type empty struct{}
	tests := []struct {
		name    string
		known   any
		extra   map[string]json.RawMessage
		want    string
		wantErr bool
	}{
		{"no extra", plainTask{Name: "a"}, nil, `{"name":"a"}`, false},
		{"empty extra", plainTask{Name: "a"}, map[string]json.RawMessage{}, `{"name":"a"}`, false},
		{"after the known members, in name order", plainTask{Name: "a"},
			map[string]json.RawMessage{"b": json.RawMessage(`2`), "a": json.RawMessage(`1`), "B": json.RawMessage(`3`)},
			`{"name":"a","B":3,"a":1,"b":2}`, false},
		{"known encodes as an empty object", empty{},
			map[string]json.RawMessage{"x": json.RawMessage(`true`), "y": json.RawMessage(`false`)},
			`{"x":true,"y":false}`, false},
		{"a value left empty is null", plainTask{Name: "a"},
			map[string]json.RawMessage{"gone": nil, "blank": json.RawMessage{}},
			`{"name":"a","blank":null,"gone":null}`, false},
		{"names escaped", plainTask{Name: "a"},
			map[string]json.RawMessage{`say "hi"`: json.RawMessage(`1`)},
			`{"name":"a","say \"hi\"":1}`, false},
		{"not an object", []int{1}, map[string]json.RawMessage{"x": json.RawMessage(`1`)}, "", true},
		{"known fails to encode", map[string]any{"f": func() {}}, nil, "", true},
	}
	for _, tt := range tests {
		got, err := jsonextra.Marshal(tt.known, tt.extra)
		if tt.wantErr {
			assert.Error(t, err, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, string(got), tt.name)
		assert.True(t, json.Valid(got), tt.name)
	}
}

func TestCompact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    map[string]json.RawMessage
		want    map[string]json.RawMessage
		wantErr bool
	}{
		{name: "nil", give: nil, want: nil},
		{
			name: "compacted, nulls dropped",
			give: map[string]json.RawMessage{
				"a": json.RawMessage(`{ "b" : [1, 2] }`), "n": json.RawMessage(` null `), "e": nil, "s": json.RawMessage(`"x y"`),
			},
			want: map[string]json.RawMessage{"a": json.RawMessage(`{"b":[1,2]}`), "s": json.RawMessage(`"x y"`)},
		},
		{name: "only nulls", give: map[string]json.RawMessage{"n": json.RawMessage(`null`)}, want: nil},
		{name: "malformed", give: map[string]json.RawMessage{"a": json.RawMessage(`{`)}, wantErr: true},
	}
	for _, tt := range tests {
		got, err := jsonextra.Compact(tt.give)
		if tt.wantErr {
			assert.Error(t, err, tt.name)
			continue
		}
		require.NoError(t, err, tt.name)
		assert.Equal(t, tt.want, got, tt.name)
	}
}
