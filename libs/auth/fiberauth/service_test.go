package fiberauth_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
	"github.com/baton-flow/baton/libs/httpx"
)

func TestServiceOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		give       *auth.Principal
		wantStatus int
	}{
		{"a service", &auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}, http.StatusOK},
		{"a user", &auth.Principal{Type: auth.TypeUser, ID: "u1"}, http.StatusForbidden},
		{"a team token", &auth.Principal{Type: auth.TypeTeam, ID: "infra"}, http.StatusForbidden},
		{"no principal", nil, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := httpx.NewApp(httpx.Config{Name: "test", NoTracing: true})
			internal := app.Group("/internal/v1", func(c *fiber.Ctx) error {
				if tt.give != nil {
					c.SetUserContext(auth.WithPrincipal(c.UserContext(), *tt.give))
				}
				return c.Next()
			}, fiberauth.ServiceOnly())
			internal.Get("/thing", func(c *fiber.Ctx) error { return c.SendString("ok") })

			resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/internal/v1/thing", nil))
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantStatus != http.StatusOK {
				var body httpx.ErrorBody
				require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
				assert.Equal(t, "PERMISSION_DENIED", body.Reason)
			}
		})
	}
}
