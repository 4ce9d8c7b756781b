//go:build unix

package testkit

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A reserved closed port refuses connections and cannot be listened on while held. That
// a released port can be bound again is not asserted: once free, any process on the
// machine may take it first (seen once while the suite ran).
func TestReserveClosedPort(t *testing.T) {
	t.Parallel()
	addr, release, err := reserveClosedPort()
	require.NoError(t, err)
	defer release()
	_, err = net.Dial("tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	_, err = net.Listen("tcp", addr)
	require.ErrorIs(t, err, syscall.EADDRINUSE, "the port is held")
}
