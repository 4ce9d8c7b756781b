package tasksapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/golden"
	"github.com/baton-flow/baton/libs/param"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/tasksapi"
)

// sampleTask has a member of every kind, unknown ones included at each level that keeps
// them.
func sampleTask() tasksapi.Task {
	minLen := 8
	return tasksapi.Task{
		Name: "compile", DisplayName: "Compile", Description: "Compiles the sources", Type: "template",
		Version: 4, Status: "active", Scope: "team", Team: "platform", CreationDate: "2025-03-14T15:09:26.535Z",
		Category: "build", Icon: "hammer", Verified: true,
		Labels:      map[string]string{"lang": "go"},
		Annotations: map[string]json.RawMessage{"docs": json.RawMessage(`"https://example.com"`)},
		Changelog:   &tasksapi.Changelog{Author: "Ada Lovelace", Reason: "faster", Date: "2025-03-14T15:09:26.535Z"},
		Spec: tasksapi.Spec{
			Image: "golang:1.25", Command: []string{"go"}, Arguments: []string{"build", "./..."},
			Script: "go vet ./...", WorkingDir: "/src",
			Envs: []tasksapi.Env{{Name: "CGO_ENABLED", Value: "0"}},
			Params: []param.Param{
				{Name: "package", Label: "package", Type: "text", Required: true},
				{Name: "token", Label: "token", Type: "password", Default: json.RawMessage(`"s3cret"`), MinValueLength: &minLen},
			},
			Results: []tasksapi.Result{{Name: "binary", Description: "the built file", Type: "string",
				Extra: map[string]json.RawMessage{"format": json.RawMessage(`"path"`)}}},
			Workspaces: []tasksapi.Workspace{{Name: "src", MountPath: "/src", ReadOnly: true}},
			StepName:   "compile",
			Extra:      map[string]json.RawMessage{"securityContext": json.RawMessage(`{"runAsUser":1000}`)},
		},
		Extra: map[string]json.RawMessage{"designer": json.RawMessage(`{"color":"blue"}`)},
	}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	golden.Check(t, []golden.Case{{Name: "task", Value: sampleTask()}})
}

func TestNoStaleFixtures(t *testing.T) {
	t.Parallel()
	golden.NoStale(t, []string{"task"})
}

func TestResolve(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("tasksapi-test-key-0123456789abcd"))
	require.NoError(t, err)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		assert.Equal(t, tasksapi.ResolvePath, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.RawQuery {
		case "ref=infra%2Fcompile&version=4":
			_, _ = w.Write([]byte(`{"name":"compile","version":4,"status":"active","type":"template","spec":{"script":"make"}}`))
		case "ref=sleep":
			_, _ = w.Write([]byte(`{"name":"sleep","version":2,"status":"inactive","type":"template","spec":{}}`))
		case "ref=gone":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"TASK_NOT_FOUND","message":"Task 'gone' has no version 1."}`))
		case "ref=plain":
			http.NotFound(w, r)
		case "ref=routeless":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"status":404,"reason":"ROUTE_NOT_FOUND"}`))
		case "ref=bad%2F":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"reason":"TASK_INVALID_NAME"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	c := tasksapi.New(registry.NewStatic(map[string][]string{tasksapi.Service: {srv.URL}}), signer, self)

	got, err := c.Resolve(t.Context(), "infra/compile", 4)
	require.NoError(t, err)
	assert.Equal(t, tasksapi.Task{Name: "compile", Version: 4, Status: "active", Type: "template", Spec: tasksapi.Spec{Script: "make"}}, got)
	got, err = c.Resolve(t.Context(), "sleep", 0)
	require.NoError(t, err)
	assert.Equal(t, "inactive", got.Status, "the caller judges status")

	tests := []struct {
		ref         string
		want        apperr.Reason
		wantMessage string
	}{
		{"gone", apperr.TaskNotFound, "Task 'gone' has no version 1."},
		{"plain", apperr.TaskNotFound, "Task 'plain' was not found."},
		{"routeless", apperr.DependencyUnavailable, ""},
		{"bad/", apperr.DependencyUnavailable, ""},
		{"failing", apperr.DependencyUnavailable, ""},
	}
	for _, tt := range tests {
		_, err := c.Resolve(t.Context(), tt.ref, 0)
		assert.True(t, apperr.HasReason(err, tt.want), "%s: %v", tt.ref, err)
		if tt.wantMessage != "" {
			var e *apperr.Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, tt.wantMessage, e.Message)
		}
	}
}
