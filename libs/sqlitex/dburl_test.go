package sqlitex_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/sqlitex"
)

func TestPathOfURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url     string
		path    string
		ok      bool
		wantErr bool
	}{
		{"", "", false, false},
		{"sqlite:/data/w.db", "/data/w.db", true, false},
		{"sqlite:///data/w.db", "/data/w.db", true, false},
		{"file:rel/w.db", "rel/w.db", true, false},
		{"sqlite:", "", false, true},
		{"sqlite://host/w.db", "", false, true},
		{"sqlite:/data/w.db?_pragma=synchronous(OFF)", "", false, true},
		{"mongodb://localhost", "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			t.Parallel()
			path, ok, err := sqlitex.PathOfURL("X_DATABASE_URL", tt.url)
			if tt.wantErr {
				assert.ErrorContains(t, err, "X_DATABASE_URL")
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.path, path)
			assert.Equal(t, tt.ok, ok)
		})
	}
}
