package gateway_test

import (
	"io"
	"log/slog"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/baton-flow/baton/gateway"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/registry"
)

const benchPath = "/api/v2/team/infra/workflow/build?version=3"

// benchSetup starts a trivial upstream standing in for every service and a gateway in
// front of it, as libs/host serves it (tracing and metrics on unless untraced), and returns
// a client of each. The rate limit stays on, high enough never to trip, so its cost is
// measured.
func benchSetup(b *testing.B, untraced bool) (direct, viaGateway *fasthttp.HostClient) {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	upstream := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		ctx.SetBodyString(`{"name":"build","version":3}`)
	}}
	go func() { _ = upstream.Serve(ln) }()
	b.Cleanup(func() { _ = upstream.Shutdown() })

	signer, err := auth.NewSigner([]byte("a-service-key-for-gateway-tests"))
	if err != nil {
		b.Fatal(err)
	}
	table := map[string][]string{}
	for _, s := range services {
		table[s] = []string{"http://" + ln.Addr().String()}
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	base := serveGateway(b,
		gateway.Config{RateLimit: 1e9, RateBurst: 1 << 30, BootstrapToken: testToken},
		gateway.Deps{Resolver: registry.NewStatic(table), Signer: signer, Logger: quiet},
		httpx.Config{Name: gateway.Name, BodyLimit: httpx.LargeBodyLimit, Logger: quiet, NoTracing: untraced})

	direct = &fasthttp.HostClient{Addr: ln.Addr().String(), MaxConns: 1024}
	viaGateway = &fasthttp.HostClient{Addr: base[len("http://"):], MaxConns: 1024}
	// Warm both connection pools and the gateway's upstream pool.
	for range 100 {
		get(b, direct)
		get(b, viaGateway)
	}
	return direct, viaGateway
}

// get sends one authenticated GET of benchPath and fails the benchmark on anything but 200.
func get(b *testing.B, c *fasthttp.HostClient) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + c.Addr + benchPath)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if err := c.Do(req, resp); err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		b.Fatalf("status %d: %s", resp.StatusCode(), resp.Body())
	}
}

// BenchmarkLatency measures request latency on loopback straight to the upstream and
// through the gateway, alternating so both see the same machine noise, and reports the
// percentiles of each and what the gateway adds. One op is one request each way.
// "untraced" leaves out the app's OpenTelemetry middleware, to show what it costs.
func BenchmarkLatency(b *testing.B) {
	for _, untraced := range []bool{false, true} {
		name := "traced"
		if untraced {
			name = "untraced"
		}
		b.Run(name, func(b *testing.B) { benchmarkLatency(b, untraced) })
	}
}

func benchmarkLatency(b *testing.B, untraced bool) {
	direct, viaGateway := benchSetup(b, untraced)
	directLat := make([]time.Duration, 0, b.N)
	gatewayLat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		get(b, direct)
		mid := time.Now()
		get(b, viaGateway)
		end := time.Now()
		directLat = append(directLat, mid.Sub(start))
		gatewayLat = append(gatewayLat, end.Sub(mid))
	}
	b.StopTimer()
	slices.Sort(directLat)
	slices.Sort(gatewayLat)
	d50, d99 := percentile(directLat, 50), percentile(directLat, 99)
	g50, g99 := percentile(gatewayLat, 50), percentile(gatewayLat, 99)
	b.ReportMetric(d50, "direct-p50-µs")
	b.ReportMetric(d99, "direct-p99-µs")
	b.ReportMetric(g50, "gateway-p50-µs")
	b.ReportMetric(g99, "gateway-p99-µs")
	b.ReportMetric(g50-d50, "added-p50-µs")
	b.ReportMetric(g99-d99, "added-p99-µs")
}

// percentile returns the p-th percentile of sorted latencies in microseconds.
func percentile(sorted []time.Duration, p int) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted) - 1) * p / 100
	return float64(sorted[i]) / float64(time.Microsecond)
}

// BenchmarkThroughput measures requests a second with parallel clients, straight to the
// upstream and through the gateway (with and without the app's tracing middleware).
func BenchmarkThroughput(b *testing.B) {
	for _, target := range []string{"direct", "gateway", "gateway-untraced"} {
		b.Run(target, func(b *testing.B) {
			direct, viaGateway := benchSetup(b, target == "gateway-untraced")
			client := direct
			if target != "direct" {
				client = viaGateway
			}
			b.SetParallelism(8)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, client)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}

// tokenBenchSetup serves a gateway authenticating through identity, in front of a trivial
// upstream and a fake identity that accepts every credential as a team token, as fast as
// loopback allows (so "uncached" measures the gateway's side of the question, not a
// database). ttl is the gateway's BATON_AUTH_CACHE_TTL; negative turns caching off.
func tokenBenchSetup(b *testing.B, ttl time.Duration) *fasthttp.HostClient {
	b.Helper()
	serve := func(h fasthttp.RequestHandler) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &fasthttp.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		b.Cleanup(func() { _ = srv.Shutdown() })
		return "http://" + ln.Addr().String()
	}
	principal := []byte(`{"type":"team","id":"infra","team":"infra","permissions":["**/read"],"tokenId":"65a1b2c3d4e5f60718293a4b"}`)
	upstream := serve(func(ctx *fasthttp.RequestCtx) {
		ctx.SetContentType("application/json")
		if string(ctx.Path()) == "/internal/v1/authenticate" {
			ctx.SetBody(principal)
			return
		}
		ctx.SetBodyString(`{"name":"build","version":3}`)
	})

	signer, err := auth.NewSigner([]byte("a-service-key-for-gateway-tests"))
	if err != nil {
		b.Fatal(err)
	}
	table := map[string][]string{}
	for _, s := range services {
		table[s] = []string{upstream}
	}
	resolver := registry.NewStatic(table)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := gateway.Config{RateLimit: 1e9, RateBurst: 1 << 30, BootstrapToken: testToken, AuthCacheTTL: ttl}
	authenticator, err := gateway.NewAuthenticator(cfg, resolver, signer, quiet)
	if err != nil {
		b.Fatal(err)
	}
	base := serveGateway(b, cfg, gateway.Deps{Resolver: resolver, Signer: signer, Logger: quiet, Authenticator: authenticator},
		httpx.Config{Name: gateway.Name, BodyLimit: httpx.LargeBodyLimit, Logger: quiet})
	c := &fasthttp.HostClient{Addr: base[len("http://"):], MaxConns: 1024}
	for range 100 {
		getWith(b, c, testToken)
		getWith(b, c, benchIdentityToken)
	}
	return c
}

// benchIdentityToken is shaped like a team token; the fake identity accepts anything.
const benchIdentityToken = "btt_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"

// getWith sends one GET of benchPath with token and fails on anything but 200.
func getWith(b *testing.B, c *fasthttp.HostClient, token string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + c.Addr + benchPath)
	req.Header.Set("Authorization", "Bearer "+token)
	if err := c.Do(req, resp); err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode() != fasthttp.StatusOK {
		b.Fatalf("status %d: %s", resp.StatusCode(), resp.Body())
	}
}

// BenchmarkTokenVerification measures what verifying an identity-issued token adds to a
// request at the gateway: each op sends one request with the bootstrap token (checked in
// process, the baseline) and one with an identity token, alternating so both see the same
// machine noise, and reports the percentiles of each and the difference. "cached" is the
// steady state (the answer is reused for BATON_AUTH_CACHE_TTL); "uncached" asks identity
// on every request (BATON_AUTH_CACHE_TTL=0), so it adds a loopback round trip.
func BenchmarkTokenVerification(b *testing.B) {
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", time.Hour}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			c := tokenBenchSetup(b, tc.ttl)
			base := make([]time.Duration, 0, b.N)
			withToken := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				getWith(b, c, testToken)
				mid := time.Now()
				getWith(b, c, benchIdentityToken)
				end := time.Now()
				base = append(base, mid.Sub(start))
				withToken = append(withToken, end.Sub(mid))
			}
			b.StopTimer()
			slices.Sort(base)
			slices.Sort(withToken)
			b50, b99 := percentile(base, 50), percentile(base, 99)
			t50, t99 := percentile(withToken, 50), percentile(withToken, 99)
			b.ReportMetric(b50, "bootstrap-p50-µs")
			b.ReportMetric(t50, "token-p50-µs")
			b.ReportMetric(t99, "token-p99-µs")
			b.ReportMetric(t50-b50, "added-p50-µs")
			b.ReportMetric(t99-b99, "added-p99-µs")
		})
	}
}
