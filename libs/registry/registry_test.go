package registry_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/registry"
	"github.com/baton-flow/baton/libs/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestStatic(t *testing.T) {
	t.Parallel()
	s := registry.NewStatic(map[string][]string{"identity": {"http://a:1"}})
	got, err := s.Resolve(context.Background(), "identity")
	require.NoError(t, err)
	assert.Equal(t, []string{"http://a:1"}, got)
	_, err = s.Resolve(context.Background(), "runs")
	assert.ErrorIs(t, err, registry.ErrNoInstance)
	s.Set("identity")
	_, err = s.Resolve(context.Background(), "identity")
	assert.ErrorIs(t, err, registry.ErrNoInstance)
}

// An instance is resolvable only while its health check passes, and no longer once it
// deregisters.
func TestConsulRegistrationAndResolution(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, err := registry.NewConsulClient(testkit.ConsulAddr(t))
	require.NoError(t, err)

	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer healthy.Close()
	host, portStr, err := net.SplitHostPort(healthy.Listener.Addr().String())
	require.NoError(t, err)
	port, _ := strconv.Atoi(portStr)

	name := "svc-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	reg := registry.NewRegistrar(client)
	require.NoError(t, reg.Register(ctx, registry.Registration{
		ID: name + "-1", Name: name, Address: host, Port: port,
		CheckURL: healthy.URL + "/ready", CheckInterval: 100 * time.Millisecond,
	}))
	// A second instance whose check fails is never handed out.
	require.NoError(t, reg.Register(ctx, registry.Registration{
		ID: name + "-2", Name: name, Address: host, Port: 1,
		CheckURL: "http://127.0.0.1:1/ready", CheckInterval: 100 * time.Millisecond,
	}))

	resolver := registry.NewConsulResolver(client, time.Millisecond)
	want := []string{"http://" + net.JoinHostPort(host, portStr)}
	require.Eventually(t, func() bool {
		got, err := resolver.Resolve(ctx, name)
		return err == nil && assert.ObjectsAreEqual(want, got)
	}, 20*time.Second, 50*time.Millisecond)

	require.NoError(t, reg.Deregister(ctx, name+"-1"))
	require.Eventually(t, func() bool {
		_, err := resolver.Resolve(ctx, name)
		return err != nil
	}, 10*time.Second, 20*time.Millisecond)
	_, err = resolver.Resolve(ctx, name)
	assert.ErrorIs(t, err, registry.ErrNoInstance)
	require.NoError(t, reg.Deregister(ctx, name+"-2"))
}
