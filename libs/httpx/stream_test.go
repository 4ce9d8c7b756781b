package httpx_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/httpx"
)

// streamApp serves a traced app on a real listener whose GET /stream answers with
// httpx.Stream and write; it answers the base URL and a function that shuts the app down.
func streamApp(t *testing.T, write func(ctx context.Context, w io.Writer) error) (string, func() error) {
	t.Helper()
	app := httpx.NewApp(httpx.Config{Name: "stream-test"})
	app.Get("/stream", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		httpx.Stream(c, write)
		return nil
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	shutdown := func() error {
		if err := app.ShutdownWithContext(context.Background()); err != nil {
			return err
		}
		return <-served
	}
	t.Cleanup(func() { _ = app.Shutdown() })
	return "http://" + ln.Addr().String(), shutdown
}

func get(t *testing.T, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = res.Body.Close() })
	return res
}

// Each write reaches the client while the stream goes on, though the tracing middleware
// reads a body whole to measure it; a stream whose write returns nil ends properly.
func TestStreamSendsEachWriteAtOnce(t *testing.T) {
	t.Parallel()
	next := make(chan struct{})
	url, _ := streamApp(t, func(_ context.Context, w io.Writer) error {
		for _, line := range []string{"one\n", "two\n"} {
			if _, err := io.WriteString(w, line); err != nil {
				return err
			}
			<-next
		}
		return nil
	})
	res := get(t, url+"/stream")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, fiber.MIMETextPlainCharsetUTF8, res.Header.Get(fiber.HeaderContentType))
	assert.NotEmpty(t, res.Header.Get(httpx.HeaderRequestID), "the middleware's headers are sent")
	body := bufio.NewReader(res.Body)
	for _, want := range []string{"one\n", "two\n"} {
		line, err := body.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, want, line, "a line arrives before the stream lets the next one go")
		next <- struct{}{}
	}
	rest, err := io.ReadAll(body)
	require.NoError(t, err, "the body ends properly")
	assert.Empty(t, rest)
}

// A write that fails cuts the body short: the client cannot take it for a complete one.
func TestStreamCutShortOnError(t *testing.T) {
	t.Parallel()
	url, _ := streamApp(t, func(_ context.Context, w io.Writer) error {
		_, _ = io.WriteString(w, "partial\n")
		return errors.New("the source failed")
	})
	res := get(t, url+"/stream")
	got, err := io.ReadAll(res.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, "partial\n", string(got))
}

// A stream's context ends when its client leaves, and when the server shuts down, whose
// drain then completes.
func TestStreamEndsWithItsClientOrTheServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		end  func(t *testing.T, res *http.Response, shutdown func() error)
	}{
		{name: "the client leaves", end: func(t *testing.T, res *http.Response, _ func() error) {
			require.NoError(t, res.Body.Close())
		}},
		{name: "the server shuts down", end: func(t *testing.T, res *http.Response, shutdown func() error) {
			require.NoError(t, shutdown(), "the drain completes")
			_, err := io.ReadAll(res.Body)
			assert.Error(t, err, "the body is cut short")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ended := make(chan error, 1)
			url, shutdown := streamApp(t, func(ctx context.Context, w io.Writer) error {
				_, _ = io.WriteString(w, "waiting\n")
				<-ctx.Done()
				ended <- ctx.Err()
				return ctx.Err()
			})
			res := get(t, url+"/stream")
			line, err := bufio.NewReader(res.Body).ReadString('\n')
			require.NoError(t, err)
			require.Equal(t, "waiting\n", line)
			tt.end(t, res, shutdown)
			select {
			case err := <-ended:
				assert.ErrorIs(t, err, context.Canceled)
			case <-time.After(30 * time.Second):
				require.FailNow(t, "the stream's context did not end")
			}
		})
	}
}

// A HEAD request gets the head alone, and the connection closes after it.
func TestStreamAnswersHeadWithTheHeadAlone(t *testing.T) {
	t.Parallel()
	url, _ := streamApp(t, func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, "body\n")
		return err
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	_, err = io.WriteString(conn, "HEAD /stream HTTP/1.1\r\nHost: baton\r\n\r\n")
	require.NoError(t, err)
	raw, err := io.ReadAll(conn)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(raw), "HTTP/1.1 200 OK\r\n"), string(raw))
	assert.True(t, strings.HasSuffix(string(raw), "\r\n\r\n"), string(raw))
	assert.NotContains(t, string(raw), "body")
}
