//go:build unix

package testkit

import (
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A reserved closed port refuses connections and cannot be listened on until released.
func TestReserveClosedPort(t *testing.T) {
	t.Parallel()
	addr, release, err := reserveClosedPort()
	require.NoError(t, err)
	_, err = net.Dial("tcp", addr)
	require.ErrorIs(t, err, syscall.ECONNREFUSED)
	_, err = net.Listen("tcp", addr)
	require.ErrorIs(t, err, syscall.EADDRINUSE, "the port is held")

	release()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "a released port can be used again")
	require.NoError(t, ln.Close())
}
