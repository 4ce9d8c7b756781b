package teamrecord_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/teamrecord"
)

func TestClient(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("teamrecord-test-key-0123456789ab"))
	require.NoError(t, err)
	self := auth.Principal{Type: auth.TypeService, ID: "workflows", Name: "workflows"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		assert.NoError(t, err)
		assert.Equal(t, self, p, "signed as the calling service")
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.EscapedPath() {
		case "/internal/v1/teams/infra":
			_, _ = w.Write([]byte(`{"id":"t-1","name":"infra","displayName":"Infra","creationDate":"2026-11-25T10:00:00Z"}`))
		case "/internal/v1/teams/gone":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"TEAM_NOT_FOUND"}`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(srv.Close)
	c := teamrecord.New(registry.NewStatic(map[string][]string{"identity": {srv.URL}}), signer, self)

	got, err := c.Team(t.Context(), "infra")
	require.NoError(t, err)
	assert.Equal(t, events.TeamCreated{ID: "t-1", Name: "infra", DisplayName: "Infra",
		CreationDate: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}, got)
	_, err = c.Team(t.Context(), "gone")
	assert.True(t, apperr.HasReason(err, apperr.TeamNotFound), "%v", err)
	_, err = c.Team(t.Context(), "broken")
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "%v", err)
}
