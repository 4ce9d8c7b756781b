package secrets_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
)

func TestSealJSON(t *testing.T) {
	t.Parallel()
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	other, err := secrets.FromString("1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100")
	require.NoError(t, err)
	tests := []struct {
		name string
		give json.RawMessage
	}{
		{"string", json.RawMessage(`"s3cret"`)},
		{"object", json.RawMessage(`{"user":"u","pass":"s3cret"}`)},
		{"number", json.RawMessage(`42`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sealed, err := secrets.SealJSON(box, tt.give)
			require.NoError(t, err)
			assert.NotContains(t, string(sealed), "s3cret")
			var s string
			require.NoError(t, json.Unmarshal(sealed, &s), "stored as a JSON string")
			assert.True(t, secrets.IsSealed(s))
			assert.Equal(t, tt.give, secrets.OpenJSON(box, sealed))
			assert.JSONEq(t, `"`+secrets.Mask+`"`, string(secrets.OpenJSON(other, sealed)), "another key reads the mask")
		})
	}
	for _, nothing := range []string{"", "null", " null "} {
		got, err := secrets.SealJSON(box, json.RawMessage(nothing))
		require.NoError(t, err)
		assert.Equal(t, nothing, string(got), "nothing stays nothing")
	}
	assert.Equal(t, `"plain"`, string(secrets.OpenJSON(box, json.RawMessage(`"plain"`))), "a value stored before sealing is read as it is")
}

// SealFields seals the values of secret items only, in a copy; OpenFields opens them again.
func TestSealFields(t *testing.T) {
	t.Parallel()
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	type param struct {
		name, kind string
		def, value json.RawMessage
	}
	secret := func(p param) bool { return p.kind == "password" }
	fields := func(p *param) []*json.RawMessage { return []*json.RawMessage{&p.def, &p.value} }
	what := func(p param) string { return "parameter " + p.name }

	plain := []param{{name: "region", kind: "text", value: json.RawMessage(`"eu"`)}}
	got, err := secrets.SealFields(box, plain, secret, fields, what)
	require.NoError(t, err)
	assert.Equal(t, plain, got, "nothing secret: answered as it is")

	given := []param{
		{name: "region", kind: "text", value: json.RawMessage(`"eu"`)},
		{name: "pw", kind: "password", def: json.RawMessage(`"d3fault"`), value: json.RawMessage(`"s3cret"`)},
	}
	sealed, err := secrets.SealFields(box, given, secret, fields, what)
	require.NoError(t, err)
	assert.Equal(t, `"s3cret"`, string(given[1].value), "the items given are not changed")
	assert.Equal(t, `"eu"`, string(sealed[0].value))
	for _, v := range []json.RawMessage{sealed[1].def, sealed[1].value} {
		assert.NotContains(t, string(v), "s3cret")
		assert.NotContains(t, string(v), "d3fault")
	}
	secrets.OpenFields(box, sealed, secret, fields)
	assert.Equal(t, given, sealed)
}
