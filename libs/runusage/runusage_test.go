package runusage_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/runusage"
)

func TestClient(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("runusage-test-key-0123456789abcd"))
	require.NoError(t, err)
	self := auth.Principal{Type: auth.TypeService, ID: "identity", Name: "identity"}
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		assert.Equal(t, "GET /internal/v1/teams/a%20team/usage", r.Method+" "+r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		_, _ = w.Write([]byte(`{"currentRuns": 7, "currentConcurrentRuns": 2, "currentRunTotalDuration": 9000,
			"currentRunMedianDuration": 1500, "monthlyResetDate": "2026-12-01T00:00:00Z"}`))
	}))
	t.Cleanup(srv.Close)
	c := runusage.New(registry.NewStatic(map[string][]string{"runs": {srv.URL}}), signer, self)

	u, err := c.Usage(t.Context(), "a team")
	require.NoError(t, err)
	assert.Equal(t, runusage.Usage{CurrentRuns: 7, CurrentConcurrentRuns: 2, CurrentRunTotalDuration: 9000,
		CurrentRunMedianDuration: 1500, MonthlyResetDate: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}, u)

	status.Store(http.StatusInternalServerError)
	_, err = c.Usage(t.Context(), "a team")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}

func TestMonthStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give, want time.Time
	}{
		{time.Date(2026, 11, 25, 15, 4, 5, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2026, 12, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, runusage.MonthStart(tt.give))
	}
}
