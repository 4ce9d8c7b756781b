package names_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/names"
)

func TestSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ give, want string }{
		{"My Flow", "my-flow"},
		{"platform_team", "platform-team"},
		{"  Ops & SRE!  ", "ops--sre"},
		{"Ünïcode Team", "ncode-team"},
		{"123", "123"},
		{"!!!", ""},
		{"a" + strings.Repeat("b", 80), "a" + strings.Repeat("b", 63)},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, names.Slug(tt.give))
		})
	}
}

func TestReserved(t *testing.T) {
	t.Parallel()
	for give, want := range map[string]bool{"query": true, "Validate-Name": true, "ADMIN": true, "build": false, "queries": false} {
		assert.Equal(t, want, names.Reserved(give), give)
	}
}

func TestCheckLabelKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		wantErr bool
	}{
		{"env", false},
		{"app.kubernetes.io/name", false},
		{"events.baton.io/chain", false},
		{"a.b", false},
		{"Tier_1.x-y", false},
		{"1", false},
		{strings.Repeat("p", names.MaxLabelPrefixLength) + "/" + strings.Repeat("n", names.MaxLabelNameLength), false},
		{"", true},
		{"$where", true},
		{"a$b", true},
		{"a\x00b", true},
		{"a\x01b", true},
		{"a\nb", true},
		{"a\x7fb", true},
		{"a b", true},
		{"\xff", true},
		{"é", true},
		{".a", true},
		{"a.", true},
		{"-a", true},
		{"a..b/c", true},
		{"A.io/c", true},
		{"a/b/c", true},
		{"/c", true},
		{"a/", true},
		{"a.b/$c", true},
		{strings.Repeat("n", names.MaxLabelNameLength+1), true},
		{strings.Repeat("p", names.MaxLabelPrefixLength+1) + "/n", true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			err := names.CheckLabelKey(tt.give)
			assert.Equal(t, tt.wantErr, err != nil, "%v", err)
		})
	}
}
