package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

func TestParamNormalize(t *testing.T) {
	t.Parallel()
	opts := []domain.Option{{Key: "a"}, {Key: "b"}}
	tests := []struct {
		name      string
		give      domain.Param
		wantValue any
		wantField string
	}{
		{"type defaults to text", domain.Param{Name: "p", Value: "x"}, "x", ""},
		{"text takes a number as text", domain.Param{Name: "p", Value: json.Number("42")}, "42", ""},
		{"number from text", domain.Param{Name: "p", Type: domain.ParamNumber, Value: " 1e3 "}, json.Number("1e3"), ""},
		{"empty number is none", domain.Param{Name: "p", Type: domain.ParamNumber, Value: ""}, nil, ""},
		{"boolean from text", domain.Param{Name: "p", Type: domain.ParamBoolean, Value: "False"}, false, ""},
		{"multiselect from a list", domain.Param{Name: "p", Type: domain.ParamMultiSelect, Options: opts, Value: []any{"a", "b"}}, []any{"a", "b"}, ""},
		{"multiselect from text", domain.Param{Name: "p", Type: domain.ParamMultiSelect, Value: "x, y"}, []any{"x", "y"}, ""},
		{"json keeps its shape", domain.Param{Name: "p", Type: domain.ParamJSON, Value: map[string]any{"k": true}}, map[string]any{"k": true}, ""},
		{"password keeps the mask", domain.Param{Name: "p", Type: domain.ParamPassword, Value: secrets.Mask}, secrets.Mask, ""},
		{"dotted name", domain.Param{Name: "db.url", Value: "x"}, "x", ""},
		{"bad name", domain.Param{Name: "-x"}, nil, "name"},
		{"bad type", domain.Param{Name: "p", Type: "rainbow"}, nil, "type"},
		{"multiselect outside options", domain.Param{Name: "p", Type: domain.ParamMultiSelect, Options: opts, Value: []any{"c"}}, nil, "value"},
		{"too long", domain.Param{Name: "p", Value: "abcd", MaxValueLength: intPtr(3)}, nil, "value"},
		{"negative length", domain.Param{Name: "p", MinValueLength: intPtr(-1)}, nil, "minValueLength"},
		{"empty option key", domain.Param{Name: "p", Options: []domain.Option{{Key: " "}}}, nil, "options[0].key"},
		{"email with a name", domain.Param{Name: "p", Type: domain.ParamEmail, Value: "Ann <ann@example.com>"}, nil, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.give
			err := p.Normalize()
			if tt.wantField != "" {
				e, ok := apperrFields(err)
				require.True(t, ok, "%v", err)
				assert.Equal(t, tt.wantField, e)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantValue, p.Value)
			assert.NotEmpty(t, p.Type)
		})
	}
}

func TestParamKeepSecrets(t *testing.T) {
	t.Parallel()
	stored := &domain.Param{Name: "p", Type: domain.ParamPassword, Value: "enc:v1:old", Default: "enc:v1:olddef"}
	text := &domain.Param{Name: "p", Type: domain.ParamText, Value: "plain"}
	tests := []struct {
		name        string
		give        domain.Param
		stored      *domain.Param
		wantValue   any
		wantDefault any
	}{
		{"omitted keeps", domain.Param{Type: domain.ParamPassword}, stored, "enc:v1:old", "enc:v1:olddef"},
		{"mask keeps", domain.Param{Type: domain.ParamPassword, Value: secrets.Mask}, stored, "enc:v1:old", "enc:v1:olddef"},
		{"new value replaces", domain.Param{Type: domain.ParamPassword, Value: "enc:v1:new"}, stored, "enc:v1:new", "enc:v1:olddef"},
		{"empty clears", domain.Param{Type: domain.ParamPassword, Value: ""}, stored, "", "enc:v1:olddef"},
		{"nothing stored", domain.Param{Type: domain.ParamPassword, Value: secrets.Mask}, nil, nil, nil},
		{"no longer a password drops it", domain.Param{Type: domain.ParamText, Value: secrets.Mask}, stored, nil, nil},
		{"a text value is not carried into a password", domain.Param{Type: domain.ParamPassword}, text, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.give
			p.KeepSecrets(tt.stored)
			assert.Equal(t, tt.wantValue, p.Value)
			assert.Equal(t, tt.wantDefault, p.Default)
		})
	}
}

func TestParamMaskedAndEffective(t *testing.T) {
	t.Parallel()
	secret := domain.Param{Name: "p", Type: domain.ParamPassword, Value: "enc:v1:x", Default: ""}
	masked := secret.Masked()
	assert.Equal(t, secrets.Mask, masked.Value)
	assert.Equal(t, "", masked.Default, "an empty secret stays empty")
	assert.Equal(t, "enc:v1:x", secret.Value, "Masked leaves the original alone")

	plain := domain.Param{Name: "p", Value: "v"}
	assert.Equal(t, plain, plain.Masked())

	tests := []struct {
		give domain.Param
		want string
	}{
		{domain.Param{Value: "v", Default: "d"}, "v"},
		{domain.Param{Value: "", Default: "d"}, "d"},
		{domain.Param{Default: json.Number("3")}, "3"},
		{domain.Param{Value: true}, "true"},
		{domain.Param{Value: []any{"a", "b"}}, `["a","b"]`},
		{domain.Param{}, ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.give.Effective())
	}
}
