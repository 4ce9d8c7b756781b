package webui_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/webui"
)

// TestAllowConnectWidensConnectSrcOnly holds that the UI's pages may call an allowed origin
// and that nothing but an origin can be written into the policy.
func TestAllowConnectWidensConnectSrcOnly(t *testing.T) {
	t.Parallel()
	ui, err := webui.New(testFS())
	require.NoError(t, err)
	for _, bad := range []string{"https://a.example.com; script-src *", "javascript:alert(1)", "https://a.example.com/path", "*", ""} {
		assert.Error(t, ui.AllowConnect(bad), bad)
	}
	assert.Equal(t, webui.CSP, ui.CSP())

	require.NoError(t, ui.AllowConnect("https://login.example.com:8443"))
	want := "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; font-src 'self' data:; connect-src 'self' https://login.example.com:8443; object-src 'none'; " +
		"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	assert.Equal(t, want, ui.CSP())

	resp, _ := do(t, newApp(t, ui), http.MethodGet, "/signin/callback?code=c&state=s", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, want, resp.Header.Get("Content-Security-Policy"))
}
