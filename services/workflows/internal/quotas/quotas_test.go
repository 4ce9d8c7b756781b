package quotas_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/workflows/internal/quotas"
)

// A team's limit is read from identity as the service, and kept for a few seconds.
func TestMaxWorkflowCount(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("quotas-test-key-0123456789abcdef"))
	require.NoError(t, err)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case identityapi.WorkflowContextPath("infra"):
			_, _ = w.Write([]byte(`{"team":"infra","paramNames":[],"maxWorkflowCount":7}`))
		case identityapi.WorkflowContextPath("gone"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"TEAM_NOT_FOUND"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	q := quotas.New(registry.NewStatic(map[string][]string{identityapi.Service: {srv.URL}}), signer, self)

	for range 2 {
		n, err := q.MaxWorkflowCount(t.Context(), "infra")
		require.NoError(t, err)
		assert.Equal(t, 7, n)
	}
	assert.EqualValues(t, 1, calls.Load(), "the second ask is answered from memory")

	tests := []struct {
		team string
		want apperr.Reason
	}{
		{"gone", apperr.TeamNotFound},
		{"broken", apperr.DependencyUnavailable},
	}
	for _, tt := range tests {
		_, err := q.MaxWorkflowCount(t.Context(), tt.team)
		assert.True(t, apperr.HasReason(err, tt.want), "%s: %v", tt.team, err)
	}
}
