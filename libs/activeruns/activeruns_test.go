package activeruns_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/activeruns"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
)

func TestClient(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("activeruns-test-key-0123456789ab"))
	require.NoError(t, err)
	var mu sync.Mutex
	var seen []string
	status := http.StatusOK
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI())
		code := status
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(`{"active": 2, "cancelled": 2}`))
	}))
	t.Cleanup(srv.Close)
	c := activeruns.New(registry.NewStatic(map[string][]string{"runs": {srv.URL}}), signer, self)

	n, err := c.Count(t.Context(), "infra", "build")
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	require.NoError(t, c.Cancel(t.Context(), "infra", ""))
	mu.Lock()
	assert.Equal(t, []string{"GET /internal/v1/teams/infra/activeruns?workflow=build", "POST /internal/v1/teams/infra/activeruns/cancel"}, seen)
	status = http.StatusInternalServerError
	mu.Unlock()
	_, err = c.Count(t.Context(), "infra", "")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "a runs service that fails makes the delete wait: %v", err)
}
