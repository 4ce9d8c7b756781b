package peer_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

func TestCall(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	me := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := signer.Decode(r.Header.Get(auth.HeaderPrincipal), r.Header.Get(auth.HeaderSignature))
		if !assert.NoError(t, err) || !assert.Equal(t, "runs", p.ID) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/echo":
			var in map[string]any
			_ = json.NewDecoder(r.Body).Decode(&in)
			w.Header().Set("X-Echo", r.Method)
			_ = json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "q": r.URL.Query().Get("q"), "in": in,
				"type": r.Header.Get("Content-Type")})
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"reason":"WORKFLOW_NOT_FOUND","message":"no such workflow"}`))
		case "/garbled":
			_, _ = w.Write([]byte(`{`))
		default:
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"reason":"INTERNAL","message":"boom"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c := peer.New("workflows", registry.NewStatic(map[string][]string{"workflows": {srv.URL}}), signer, 5*time.Second)

	var out struct {
		Method, Q, Type string
		In              map[string]any
	}
	a, err := c.Call(t.Context(), me, http.MethodPost, "/echo", url.Values{"q": {"x y"}}, map[string]int{"n": 1}, &out)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, a.Status)
	assert.Equal(t, "POST", a.Header.Get("X-Echo"), "a 200's headers are the caller's to read")
	assert.Equal(t, "POST", out.Method)
	assert.Equal(t, "x y", out.Q)
	assert.Equal(t, "application/json", out.Type)
	assert.EqualValues(t, 1, out.In["n"])

	a, err = c.Call(t.Context(), me, http.MethodGet, "/missing", nil, nil, &out)
	require.NoError(t, err)
	assert.Equal(t, peer.Answer{Status: 404, Reason: "WORKFLOW_NOT_FOUND", Message: "no such workflow"}, a)
	err = c.Get(t.Context(), me, "/missing", nil, &out)
	assert.True(t, apperr.HasReason(err, apperr.WorkflowNotFound), "a known client error is the peer's: %v", err)

	a, err = c.Call(t.Context(), me, http.MethodGet, "/failing", nil, nil, &out)
	require.NoError(t, err)
	assert.Equal(t, http.StatusInternalServerError, a.Status)
	err = c.Get(t.Context(), me, "/failing", nil, &out)
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable), "a server error is the dependency's: %v", err)
	require.NoError(t, c.Get(t.Context(), me, "/echo", nil, &out))
	assert.Equal(t, "GET", out.Method)

	_, err = c.Call(t.Context(), me, http.MethodGet, "/garbled", nil, nil, &out)
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable))

	_, err = peer.New("workflows", registry.NewStatic(nil), signer, time.Second).Call(t.Context(), me, http.MethodGet, "/echo", nil, nil, nil)
	assert.True(t, apperr.HasReason(err, apperr.DependencyUnavailable))
	assert.True(t, errors.Is(err, registry.ErrNoInstance))
}
