package paramnames_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/services/workflows/internal/paramnames"
)

var (
	self   = auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	reader = auth.Principal{Type: auth.TypeUser, ID: "u-1", Teams: map[string]string{"infra": "reader"}}
)

// Global and team names come from identity's internal endpoints, asked as the service
// whoever the caller is.
func TestNames(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("paramnames-test-key-0123456789ab"))
	require.NoError(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case identityapi.ParametersPath:
			assert.Equal(t, self, p)
			_, _ = w.Write([]byte(`{"names":["region","token"]}`))
		case identityapi.WorkflowContextPath("infra"):
			assert.Equal(t, self, p)
			_, _ = w.Write([]byte(`{"team":"infra","paramNames":["db","zone"],"maxWorkflowCount":5}`))
		case identityapi.WorkflowContextPath("other"):
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"TEAM_NOT_FOUND","message":"Team 'other' was not found."}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"reason":"PERMISSION_DENIED"}`))
		}
	}))
	t.Cleanup(srv.Close)
	s := paramnames.New(registry.NewStatic(map[string][]string{identityapi.Service: {srv.URL}}), signer, self)
	ctx := auth.WithPrincipal(context.Background(), reader)

	global, err := s.GlobalParams(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"region", "token"}, global)
	team, err := s.TeamParams(ctx, "infra")
	require.NoError(t, err)
	assert.Equal(t, []string{"db", "zone"}, team)
	_, err = s.TeamParams(ctx, "other")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
}
