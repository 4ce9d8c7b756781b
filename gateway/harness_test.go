package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/gateway/internal/contract"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/telemetry"
)

// TestMain installs the process's telemetry as libs/host does (traces kept in process,
// metrics for Prometheus), so tests see trace propagation and benchmarks pay what a real
// gateway pays; it reports how many exchanges were checked against the contract.
func TestMain(m *testing.M) {
	tel, err := telemetry.Setup(context.Background(), telemetry.Config{ServiceName: gateway.Name})
	if err != nil {
		fmt.Fprintln(os.Stderr, "telemetry:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = tel.Shutdown(context.Background())
	if err := contract.Report(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = max(code, 1)
	}
	os.Exit(code)
}

const testToken = "bt-bootstrap-test-token"

var services = []string{"identity", "workflows", "tasks", "runs", "schedules", "integrations"}

// call is a request as an upstream service saw it.
type call struct {
	Service    string
	Method     string
	RequestURI string
	Header     http.Header
	Body       []byte
}

// upstream is a fake service on loopback that records every request it gets.
type upstream struct {
	name  string
	url   string
	calls chan call
}

// standIn is the header a fake upstream sets on its answers: they are the test's
// inventions, not a service's behaviour, and the contract check passes them on.
const standIn = "X-Test-Stand-In"

// startUpstream starts a service answering with behave, or, when behave is nil, with 200
// and a JSON body naming the service and the request URI.
func startUpstream(t testing.TB, name string, behave http.HandlerFunc) *upstream {
	t.Helper()
	u := &upstream{name: name, calls: make(chan call, 1024)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case u.calls <- call{Service: name, Method: r.Method, RequestURI: r.RequestURI, Header: r.Header.Clone(), Body: body}:
		default:
		}
		w.Header().Set(standIn, name)
		if behave != nil {
			behave(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"service": name, "uri": r.RequestURI})
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

// lastCall returns the request the service received, failing if it got none in time.
func (u *upstream) lastCall(t testing.TB) call {
	t.Helper()
	select {
	case c := <-u.calls:
		return c
	case <-time.After(5 * time.Second):
		t.Fatalf("%s received no request", u.name)
		return call{}
	}
}

// lockedBuffer collects log output written from several goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a gateway on loopback in an app built as libs/host builds it, in front of one
// fake upstream per service.
type harness struct {
	base      string
	signer    *auth.Signer
	resolver  *registry.Static
	upstreams map[string]*upstream
	logs      *lockedBuffer
	client    *http.Client
}

func newHarness(t testing.TB, cfg gateway.Config) *harness {
	t.Helper()
	return newHarnessWith(t, cfg, nil)
}

// newHarnessWith is newHarness with the authenticator authn makes from the harness's
// resolver and signer; nil keeps the bootstrap token alone.
func newHarnessWith(t testing.TB, cfg gateway.Config, authn func(h *harness) gateway.Authenticator) *harness {
	t.Helper()
	if cfg.BootstrapToken == "" {
		cfg.BootstrapToken = testToken
	}
	signer, err := auth.NewSigner([]byte("a-service-key-for-gateway-tests"))
	require.NoError(t, err)
	h := &harness{
		signer:    signer,
		resolver:  registry.NewStatic(nil),
		upstreams: map[string]*upstream{},
		logs:      &lockedBuffer{},
	}
	// Every exchange is checked against the contract: the gateway's own answers fully.
	h.client = contract.Client(t, &http.Client{Timeout: 10 * time.Second}, contract.StandIns(standIn))
	for _, name := range services {
		u := startUpstream(t, name, nil)
		h.upstreams[name] = u
		h.resolver.Set(name, u.url)
	}
	logger := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var a gateway.Authenticator
	if authn != nil {
		a = authn(h)
	}
	h.base = serveGateway(t, cfg, gateway.Deps{Resolver: h.resolver, Signer: signer, Logger: logger, Authenticator: a},
		httpx.Config{Name: gateway.Name, BodyLimit: httpx.LargeBodyLimit, Logger: logger})
	t.Cleanup(h.client.CloseIdleConnections)
	return h
}

// serveGateway serves a gateway on a loopback port, in an app made as libs/host makes it,
// until the test ends and returns its base URL.
func serveGateway(t testing.TB, cfg gateway.Config, deps gateway.Deps, appCfg httpx.Config) string {
	t.Helper()
	g, err := gateway.New(cfg, deps)
	require.NoError(t, err)
	app := httpx.NewApp(appCfg)
	g.Routes(app)

	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- g.Run(ctx) }()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	t.Cleanup(func() {
		require.NoError(t, app.ShutdownWithTimeout(5*time.Second))
		require.NoError(t, <-served)
		cancel()
		require.NoError(t, <-ran)
	})
	return "http://" + ln.Addr().String()
}

// request describes one request to the gateway.
type request struct {
	method string
	path   string // with query
	header map[string]string
	body   []byte
}

// do sends r and returns the response with its body read.
func (h *harness) do(t testing.TB, r request) (*http.Response, []byte) {
	t.Helper()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, h.base+r.path, body)
	require.NoError(t, err)
	for k, v := range r.header {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, raw
}

// bearer returns the headers of a request authenticated with token.
func bearer(token string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + token}
}

// errorBody is the contract's error body.
type errorBody struct {
	Timestamp string `json:"timestamp"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Code      int    `json:"code"`
	Reason    string `json:"reason"`
	Message   string `json:"message"`
	Path      string `json:"path"`
	TraceID   string `json:"traceId"`
}

// requireError checks that a response is the contract's error body with status and reason.
func requireError(t testing.TB, resp *http.Response, raw []byte, status int, reason, path string) errorBody {
	t.Helper()
	require.Equal(t, status, resp.StatusCode, "body: %s", raw)
	require.Contains(t, resp.Header.Get("Content-Type"), fiber.MIMEApplicationJSON)
	var e errorBody
	require.NoError(t, json.Unmarshal(raw, &e), "body: %s", raw)
	require.Equal(t, status, e.Status)
	require.Equal(t, http.StatusText(status), e.Error)
	require.Equal(t, reason, e.Reason)
	require.NotZero(t, e.Code)
	require.NotEmpty(t, e.Message)
	require.NotEmpty(t, e.Timestamp)
	require.Equal(t, path, e.Path)
	return e
}
