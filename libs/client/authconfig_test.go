package client_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/client"
)

func TestGetAuthConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		give map[string]any
		want *client.OIDCSignIn
	}{
		{name: "tokens only", give: map[string]any{}},
		{
			name: "OpenID Connect",
			give: map[string]any{"oidc": map[string]any{"issuer": "https://login.example.com", "clientId": "baton",
				"scopes": []string{"openid", "email"}, "bearer": "idToken"}},
			want: &client.OIDCSignIn{Issuer: "https://login.example.com", ClientID: "baton", Scopes: []string{"openid", "email"}, Bearer: "idToken"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodGet || r.URL.Path != "/api/v2/auth/config" {
					writeJSON(w, http.StatusNotFound, map[string]any{"status": 404, "reason": "ROUTE_NOT_FOUND", "message": r.URL.Path})
					return
				}
				writeJSON(w, http.StatusOK, tt.give)
			})
			got, err := c.GetAuthConfig(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tt.want, got.OIDC)
		})
	}
}
