package runs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/services/runs"
)

func TestSQLitePath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give    string
		want    string
		ok      bool
		wantErr bool
	}{
		{give: "", ok: false},
		{give: "sqlite:/var/lib/baton/runs.db", want: "/var/lib/baton/runs.db", ok: true},
		{give: "sqlite:///var/lib/baton/runs.db", want: "/var/lib/baton/runs.db", ok: true},
		{give: "file:.baton/runs.db", want: ".baton/runs.db", ok: true},
		{give: "sqlite:data/../runs.db", want: "runs.db", ok: true},
		{give: "sqlite:", wantErr: true},
		{give: "sqlite://host/runs.db", wantErr: true},
		{give: "sqlite:/runs.db?_pragma=synchronous(OFF)", wantErr: true},
		{give: "mongodb://localhost:27017", wantErr: true},
		{give: "/var/lib/baton/runs.db", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			t.Parallel()
			got, ok, err := runs.SQLitePath(tt.give)
			if tt.wantErr {
				assert.ErrorContains(t, err, runs.DatabaseURLEnv)
				return
			}
			assert.NoError(t, err)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}
