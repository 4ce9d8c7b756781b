package param_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/param"
)

func TestReadsEitherSpelling(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		give        string
		wantName    string
		wantDefault string
		wantHelper  string
	}{
		{"baton names", `{"name":"env","default":"dev","helpertext":"h"}`, "env", `"dev"`, "h"},
		{"v4 names", `{"key":"env","defaultValue":"dev","helperText":"h"}`, "env", `"dev"`, "h"},
		{"both, equal", `{"name":"env","key":"env","default":{"a":1},"defaultValue":{ "a": 1 }}`, "env", `{"a":1}`, ""},
		{"null default, v4 default", `{"key":"n","default":null,"defaultValue":3}`, "n", `3`, ""},
		{"no default", `{"name":"n"}`, "n", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p param.Param
			require.NoError(t, json.Unmarshal([]byte(tt.give), &p))
			assert.Equal(t, tt.wantName, p.Name)
			if tt.wantDefault == "" {
				assert.Nil(t, p.Default)
			} else {
				assert.JSONEq(t, tt.wantDefault, string(p.Default))
			}
			assert.Equal(t, tt.wantHelper, p.HelperText)
			assert.Empty(t, p.Extra, "aliases are not unknown members")
		})
	}
}

func TestRefusesConflictingSpellings(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, give string }{
		{"name and key", `{"name":"a","key":"b"}`},
		{"default and defaultValue", `{"name":"a","default":"x","defaultValue":"y"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var p param.Param
			assert.ErrorIs(t, json.Unmarshal([]byte(tt.give), &p), param.ErrConflict)
		})
	}
}

func TestWritesBothSpellings(t *testing.T) {
	t.Parallel()
	min := 2
	tests := []struct {
		name string
		give param.Param
		want string
	}{
		{
			"label defaults to the name",
			param.Param{Name: "env", Type: "text", Default: json.RawMessage(`"dev"`)},
			`{"name":"env","key":"env","label":"env","type":"text","default":"dev","defaultValue":"dev","required":false,"readOnly":false,"hiddenValue":false}`,
		},
		{
			"label kept, no default",
			param.Param{Name: "n", Label: "Count", Required: true, MinValueLength: &min},
			`{"name":"n","key":"n","label":"Count","required":true,"minValueLength":2,"readOnly":false,"hiddenValue":false}`,
		},
		{
			"unknown members after the known ones",
			param.Param{Name: "n", Extra: map[string]json.RawMessage{"zeta": json.RawMessage(`1`), "alpha": json.RawMessage(`"a"`)}},
			`{"name":"n","key":"n","label":"n","required":false,"readOnly":false,"hiddenValue":false,"alpha":"a","zeta":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := json.Marshal(tt.give)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func TestRoundTripKeepsUnknownMembers(t *testing.T) {
	t.Parallel()
	var p param.Param
	require.NoError(t, json.Unmarshal([]byte(`{"key":"x","defaultValue":1,"designer":{"row": 2},"gone":null}`), &p))
	assert.Equal(t, map[string]json.RawMessage{"designer": json.RawMessage(`{"row":2}`)}, p.Extra)
	out, err := json.Marshal(p)
	require.NoError(t, err)
	var back param.Param
	require.NoError(t, json.Unmarshal(out, &back))
	p.Label = "x" // a label left out is written as the name, and read back so
	assert.Equal(t, p, back)
}
