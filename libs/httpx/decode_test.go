package httpx_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/httpx"
)

// TestDecodeJSONTakesOneValueNotNull: a body is one JSON value, nothing after it, and not
// null, whatever it is decoded into.
func TestDecodeJSONTakesOneValueNotNull(t *testing.T) {
	t.Parallel()
	app := httpx.NewApp(httpx.Config{Name: "test"})
	app.Post("/echo", func(c *fiber.Ctx) error {
		var v struct{ X int }
		if err := httpx.DecodeJSON(c, &v); err != nil {
			return err
		}
		return c.JSON(v)
	})
	app.Post("/list", func(c *fiber.Ctx) error {
		var v []string
		if err := httpx.DecodeJSON(c, &v); err != nil {
			return err
		}
		return c.JSON(v)
	})
	tests := []struct {
		name, path, body string
		wantStatus       int
	}{
		{"an object", "/echo", `{"x":1}`, http.StatusOK},
		{"white space after", "/echo", "{\"x\":1}\n\t ", http.StatusOK},
		{"garbage after", "/echo", `{"x":1}}}garbage`, http.StatusBadRequest},
		{"a second value", "/echo", `{"x":1}{"x":2}`, http.StatusBadRequest},
		{"null for an object", "/echo", `null`, http.StatusBadRequest},
		{"null for a list", "/list", ` null `, http.StatusBadRequest},
		{"a list", "/list", `["a"]`, http.StatusOK},
		{"a stray bracket after a list", "/list", `["a"]]`, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, tt.path, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			resp, body := do(t, app, req)
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			if tt.wantStatus == http.StatusBadRequest {
				assert.Equal(t, "REQUEST_INVALID", body.Reason)
			}
		})
	}
}
