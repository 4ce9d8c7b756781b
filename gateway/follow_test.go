package gateway_test

import (
	"bufio"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
)

// followThroughGateway starts a gateway whose runs instance answers with upstream and
// follows a task run's log through it, up to its first line.
func followThroughGateway(t *testing.T, upstream http.HandlerFunc) (*http.Response, *bufio.Reader) {
	t.Helper()
	h := newHarness(t, gateway.Config{})
	logs := startUpstream(t, "runs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "line 1\n")
		w.(http.Flusher).Flush()
		upstream(w, r)
	})
	h.resolver.Set("runs", logs.url)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.base+"/api/v2/taskrun/65a1b2c3d4e5f60718293a4b/log?follow=true", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	require.Equal(t, http.StatusOK, res.StatusCode)
	body := bufio.NewReader(res.Body)
	line, err := body.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "line 1\n", line)
	return res, body
}

// A client that leaves a followed log ends the gateway's request upstream at once, not
// when the log next has something to say.
func TestFollowedLogClientLeavingEndsTheUpstreamRequest(t *testing.T) {
	t.Parallel()
	left, over := make(chan struct{}), make(chan struct{})
	res, _ := followThroughGateway(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			close(left)
		case <-over:
		}
	})
	// Runs before the servers' cleanups, which wait for the handler.
	t.Cleanup(func() { close(over) })
	require.NoError(t, res.Body.Close())
	select {
	case <-left:
	case <-time.After(30 * time.Second):
		require.FailNow(t, "the upstream request outlived its client")
	}
}

// A followed log its instance cuts short (a shutdown) reaches the client cut short, so
// that it cannot be taken for a log whose task ended.
func TestFollowedLogCutShortUpstreamIsCutShort(t *testing.T) {
	t.Parallel()
	_, body := followThroughGateway(t, func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	})
	rest, err := io.ReadAll(body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Empty(t, rest)
}
