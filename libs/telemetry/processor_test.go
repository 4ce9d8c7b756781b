package telemetry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/baton-flow/baton/libs/telemetry"
)

// A process given a span processor records every span for it, with no exporter
// configured. Not parallel: Setup installs the process's global tracer provider.
func TestSpanProcessorRecordsEverySpan(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tel, err := telemetry.Setup(ctx, telemetry.Config{ServiceName: "test", Version: "1", SpanProcessor: rec})
	require.NoError(t, err)
	defer func() { require.NoError(t, tel.Shutdown(ctx)) }()

	ctx, parent := otel.Tracer("test").Start(ctx, "submit")
	assert.True(t, parent.IsRecording())
	_, child := otel.Tracer("test").Start(ctx, "step")
	child.End()
	parent.End()

	ended := rec.Ended()
	require.Len(t, ended, 2)
	assert.Equal(t, "step", ended[0].Name())
	assert.Equal(t, parent.SpanContext().SpanID(), ended[0].Parent().SpanID())
	assert.Equal(t, "submit", ended[1].Name())
}
