package usage_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/workflowsapi"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/usage"
)

func TestChecker(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("usage-test-key-0123456789"))
	require.NoError(t, err)
	tests := []struct {
		name       string
		status     int
		body       string
		want       []string
		wantReason *apperr.Reason
	}{
		{"used", 200, `{"workflows":["release","nightly"]}`, []string{"release", "nightly"}, nil},
		{"unused", 200, `{"workflows":[]}`, []string{}, nil},
		{"endpoint not there yet", 404, `{"status":404,"reason":"ROUTE_NOT_FOUND"}`, []string{}, nil},
		{"another 404", 404, `{"status":404,"reason":"TEAM_NOT_FOUND"}`, nil, &apperr.DependencyUnavailable},
		{"not JSON", 200, `<html>`, nil, &apperr.DependencyUnavailable},
		{"failing", 500, `{}`, nil, &apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
				if !assert.NoError(t, err) || !assert.Equal(t, auth.TypeService, p.Type) {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				assert.Equal(t, workflowsapi.TaskUsagePath, r.URL.Path)
				assert.Equal(t, "infra/build", r.URL.Query().Get("ref"))
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}))
			t.Cleanup(srv.Close)
			resolver := registry.NewStatic(map[string][]string{workflowsapi.Service: {srv.URL}})
			c := usage.NewChecker(resolver, signer, slog.New(slog.NewTextHandler(io.Discard, nil)))

			got, err := c.WorkflowsUsing(t.Context(), domain.TeamRef("infra", "build"))
			if tt.wantReason != nil {
				require.Error(t, err)
				assert.True(t, apperr.HasReason(err, *tt.wantReason), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("no instance", func(t *testing.T) {
		t.Parallel()
		c := usage.NewChecker(registry.NewStatic(nil), signer, nil)
		_, err := c.WorkflowsUsing(t.Context(), domain.TeamRef("infra", "build"))
		assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
	})
}
