package sqlitex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/sqlitex"
)

func TestPathFromURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url     string
		path    string
		ok      bool
		wantErr bool
	}{
		{"", "", false, false},
		{"sqlite:/data/identity.db", "/data/identity.db", true, false},
		{"sqlite:///data/identity.db", "/data/identity.db", true, false},
		{"file:rel/../identity.db", "identity.db", true, false},
		{"sqlite:", "", false, true},
		{"sqlite://host/identity.db", "", false, true},
		{"sqlite:/data/identity.db?_pragma=synchronous(OFF)", "", false, true},
		{"mongodb://localhost:27017", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			path, ok, err := sqlitex.PathFromURL(tt.url)
			if tt.wantErr {
				assert.Error(t, err)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.path, path)
			assert.Equal(t, tt.ok, ok)
		})
	}
}
