package jsonbody_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/jsonbody"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		give    string
		want    any
		wantErr error
	}{
		{"an object", `{"x":1}`, map[string]any{"x": json.Number("1")}, nil},
		{"white space around", " \n\t[1] \r\n", []any{json.Number("1")}, nil},
		{"null", `null`, nil, nil},
		{"a stray brace after", `{"x":1}}}garbage`, nil, jsonbody.ErrTrailing},
		{"a stray bracket after", `[1]]`, nil, jsonbody.ErrTrailing},
		{"a second value", `{"x":1} {"y":2}`, nil, jsonbody.ErrTrailing},
		{"words after", `1 garbage`, nil, jsonbody.ErrTrailing},
		{"a NUL after", "{}\x00", nil, jsonbody.ErrTrailing},
		{"empty", "", nil, jsonbody.ErrEmpty},
		{"blank", " \n", nil, jsonbody.ErrEmpty},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got any
			err := jsonbody.DecodeNumbers([]byte(tt.give), &got)
			assert.Equal(t, err, jsonbody.Check([]byte(tt.give)), "Check agrees")
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeRefusesWhatUnmarshalRefuses(t *testing.T) {
	t.Parallel()
	for _, give := range []string{`{`, `{"a":}`, `[1,]`, "\xff"} {
		var v any
		assert.Error(t, jsonbody.Decode([]byte(give), &v), give)
		assert.Error(t, json.Unmarshal([]byte(give), &v), give)
	}
}

func TestIsNull(t *testing.T) {
	t.Parallel()
	assert.True(t, jsonbody.IsNull([]byte(" null\n")))
	assert.False(t, jsonbody.IsNull([]byte(`"null"`)))
	assert.False(t, jsonbody.IsNull([]byte(`{}`)))
}
