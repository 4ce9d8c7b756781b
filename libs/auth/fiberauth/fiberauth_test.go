package fiberauth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/auth/fiberauth"
)

func TestCredential(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		headers    map[string]string
		query      string
		allowQuery bool
		want       string
	}{
		{"bearer", map[string]string{"Authorization": "Bearer abc"}, "", false, "abc"},
		{"bearer any case", map[string]string{"Authorization": "bearer  abc "}, "", false, "abc"},
		{"x-access-token", map[string]string{"x-access-token": "xyz"}, "", false, "xyz"},
		{"bearer wins", map[string]string{"Authorization": "Bearer abc", "x-access-token": "xyz"}, "", false, "abc"},
		{"basic is not a token", map[string]string{"Authorization": "Basic abc"}, "", false, ""},
		{"query refused", nil, "access_token=q", false, ""},
		{"query allowed", nil, "access_token=q", true, "q"},
		{"none", nil, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			app := fiber.New()
			var got string
			app.Get("/", func(c *fiber.Ctx) error {
				got = fiberauth.Credential(c, tt.allowQuery)
				return nil
			})
			req := httptest.NewRequest(http.MethodGet, "/?"+tt.query, nil)
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			resp, err := app.Test(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	s, err := auth.NewSigner([]byte("0123456789abcdef0123"))
	require.NoError(t, err)
	app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
		return c.SendStatus(apperr.KindOf(err).HTTPStatus())
	}})
	app.Use(fiberauth.Middleware(s))
	app.Get("/", func(c *fiber.Ctx) error {
		p, ok := auth.FromContext(c.UserContext())
		require.True(t, ok)
		return c.SendString(p.ID)
	})

	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil))
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	req := httptest.NewRequest(http.MethodGet, "/", nil)
	require.NoError(t, s.SetHeaders(auth.Principal{Type: auth.TypeUser, ID: "u1"}, req.Header.Set))
	resp, err = app.Test(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// The anonymous principal of open endpoints is refused everywhere else.
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	require.NoError(t, s.SetHeaders(auth.Anonymous, req.Header.Set))
	resp, err = app.Test(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	open := fiber.New()
	open.Use(fiberauth.OpenMiddleware(s))
	open.Get("/", func(c *fiber.Ctx) error {
		p, _ := auth.FromContext(c.UserContext())
		return c.SendString(p.Type)
	})
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	require.NoError(t, s.SetHeaders(auth.Anonymous, req.Header.Set))
	resp, err = open.Test(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
