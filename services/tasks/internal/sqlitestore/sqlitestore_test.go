package sqlitestore_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/secrets"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/sqlitestore"
	"github.com/baton-flow/baton/services/tasks/internal/storetest"
)

func newStore(t testing.TB) (*sqlitestore.Store, string) {
	t.Helper()
	box, err := secrets.FromString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "tasks.db")
	s, err := sqlitestore.Open(context.Background(), path, box)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s, path
}

func TestStoreContract(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) app.TaskStore {
		s, _ := newStore(t)
		return s
	})
}

// A password parameter's default and value are sealed in the file and its write-ahead
// log, in the latest version and the ones kept, and read back opened.
func TestSecretsAreSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, path := newStore(t)
	const def, value = "d3fault-pw", "v4lue-pw"
	ref := domain.TeamRef("alpha", "deploy")
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	task := domain.Task{Name: "deploy", Type: "template", Version: 1, Status: domain.StatusActive, Scope: domain.ScopeTeam,
		Team: "alpha", CreationDate: at, Changelog: domain.Changelog{Author: "ada", Date: at},
		Spec: domain.Spec{Script: "deploy-script-marker", Params: []domain.Param{
			{Name: "key", Type: "password", Default: json.RawMessage(`"` + def + `"`), Value: json.RawMessage(`"` + value + `"`)},
		}}}
	require.NoError(t, s.CreateTask(ctx, task))
	_, err := s.UpdateTask(ctx, ref, func(latest domain.Task) (domain.Task, error) {
		latest.Version++
		return latest, nil
	})
	require.NoError(t, err)

	var files []byte
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if err == nil {
			files = append(files, raw...)
		}
	}
	require.Contains(t, string(files), "deploy-script-marker", "the files were read")
	for _, secret := range []string{def, value} {
		assert.False(t, strings.Contains(string(files), secret), "%s is in the file in clear", secret)
	}
	got, err := s.FindTaskVersion(ctx, ref, 1)
	require.NoError(t, err)
	assert.JSONEq(t, `"`+value+`"`, string(got.Spec.Params[0].Value))
}
