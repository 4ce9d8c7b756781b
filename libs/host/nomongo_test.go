package host_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/host"
)

// A process that connects to no MongoDB gives its services no database, rather than one
// of a client it does not have, and checks no MongoDB for their readiness.
func TestPlatformWithoutMongo(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"BATON_SERVICE_KEY": "0123456789abcdef0123456789abcdef", "OTEL_SDK_DISABLED": "true", "BATON_LOG_LEVEL": "error"}
	env, err := host.LoadEnv(func(k string) string { return vars[k] })
	require.NoError(t, err)
	ctx := context.Background()
	p, err := host.Connect(ctx, "test", env, host.Options{NoMongo: true, NoKafka: true})
	require.NoError(t, err)
	defer p.Close(ctx)

	assert.Nil(t, p.Mongo)
	assert.Nil(t, p.Database("runs"), "no database without a MongoDB")
	assert.Empty(t, p.Checks(), "nothing is checked that the process does not use")
}
