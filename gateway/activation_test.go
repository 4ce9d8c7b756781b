package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

// lock is an activation check that answers locked until opened.
type lock struct{ open atomic.Bool }

func (l *lock) Check(context.Context) error {
	if l.open.Load() {
		return nil
	}
	return apperr.New(apperr.InstanceLocked, "This installation is not activated yet.")
}

func TestALockedInstallationAnswersOnlyOpenRoutes(t *testing.T) {
	t.Parallel()
	var reached atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reached.Add(1)
		_, _ = w.Write([]byte("true"))
	}))
	t.Cleanup(upstream.Close)
	table := map[string][]string{}
	for _, s := range []string{"identity", "workflows", "integrations"} {
		table[s] = []string{upstream.URL}
	}
	signer, err := auth.NewSigner([]byte("gateway-activation-test-key-0123"))
	require.NoError(t, err)
	l := &lock{}
	g, err := gateway.New(gateway.Config{BootstrapToken: "bt-activation-test", RateLimit: -1},
		gateway.Deps{Resolver: registry.NewStatic(table), Signer: signer, Activation: l})
	require.NoError(t, err)
	app := httpx.NewApp(httpx.Config{Name: "gateway"})
	g.Routes(app)

	send := func(method, path, token, body string) (int, string) {
		t.Helper()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := app.Test(req, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(raw)
	}

	tests := []struct {
		name, method, path, token string
		wantCode                  int
	}{
		{"a closed route with a credential", "GET", "/api/v2/team/query", "bt-activation-test", http.StatusLocked},
		{"a closed route without one", "POST", "/api/v2/team", "", http.StatusLocked},
		{"activation", "PUT", "/api/v2/activate", "", http.StatusOK},
		{"an open integration route", "POST", "/api/v2/integration/chat/events", "", http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, raw := send(tt.method, tt.path, tt.token, "")
			require.Equal(t, tt.wantCode, code, raw)
			if code == http.StatusLocked {
				var body httpx.ErrorBody
				require.NoError(t, json.Unmarshal([]byte(raw), &body))
				assert.Equal(t, "INSTANCE_LOCKED", body.Reason)
				assert.Equal(t, 1902, body.Code)
			}
		})
	}
	assert.EqualValues(t, 2, reached.Load(), "only the open routes reached a service")

	l.open.Store(true)
	code, raw := send("GET", "/api/v2/team/query", "bt-activation-test", "")
	assert.Equal(t, http.StatusOK, code, raw)
}
