package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/baton-flow/baton/libs/telemetry"
)

// receiver is an OTLP/HTTP trace receiver that takes spans on path alone, as a collector
// does on /v1/traces, and answers 404 anywhere else.
type receiver struct {
	path  string
	mu    sync.Mutex
	spans []string
	// missed are the paths posted to that are not path.
	missed []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != rc.path {
		rc.missed = append(rc.missed, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err != nil || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				rc.spans = append(rc.spans, s.GetName())
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// A span made after Setup reaches a receiver that takes traces only on the OTLP path, for a
// base endpoint written as compose and Kubernetes write it, and for one that names the
// path itself. Not parallel: Setup installs the process's global tracer provider.
func TestSpansReachTheCollectorsTracesPath(t *testing.T) {
	tests := []struct {
		name string
		// path is where the receiver takes traces; endpoint is BATON_OTLP_ENDPOINT after
		// the receiver's base URL.
		path, endpoint string
	}{
		{"base URL", "/v1/traces", ""},
		{"base URL with a slash", "/v1/traces", "/"},
		{"base URL under a path", "/otlp/v1/traces", "/otlp"},
		{"the traces URL itself", "/v1/traces", "/v1/traces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &receiver{path: tt.path}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			ctx := context.Background()
			tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "test", Version: "1", OTLPEndpoint: srv.URL + tt.endpoint})
			require.NoError(t, err)

			_, span := otel.Tracer("test").Start(ctx, "submit "+tt.name)
			span.End()
			// Shutdown flushes the batch: the export has been answered when it returns.
			require.NoError(t, tel.Shutdown(ctx))

			rc.mu.Lock()
			defer rc.mu.Unlock()
			assert.Empty(t, rc.missed, "nothing is posted beside the traces path")
			assert.Equal(t, []string{"submit " + tt.name}, rc.spans)
		})
	}
}

func TestTracesURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		give, want string
	}{
		{"http://otel-collector:4318", "http://otel-collector:4318/v1/traces"},
		{"http://otel-collector:4318/", "http://otel-collector:4318/v1/traces"},
		{"https://gw.example.com/otlp/", "https://gw.example.com/otlp/v1/traces"},
		{"http://otel-collector:4318/v1/traces", "http://otel-collector:4318/v1/traces"},
		{"http://otel-collector:4318/v1/traces/", "http://otel-collector:4318/v1/traces"},
		{"otel-collector:4318", ""},
		{"grpc://otel-collector:4317", ""},
		{"http:///v1/traces", ""},
	}
	for _, tt := range tests {
		got, err := telemetry.TracesURL(tt.give)
		if tt.want == "" {
			assert.Error(t, err, tt.give)
			continue
		}
		require.NoError(t, err, tt.give)
		assert.Equal(t, tt.want, got, tt.give)
	}
}
