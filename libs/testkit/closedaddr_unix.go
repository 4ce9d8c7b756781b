//go:build unix

package testkit

import (
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// reserveClosedPort binds a TCP socket to a free loopback port and never listens on it:
// the kernel refuses connections to the port, and refuses to bind it again (the socket does
// not set SO_REUSEADDR) until release closes the socket.
func reserveClosedPort() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		return "", nil, fmt.Errorf("bind: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		return "", nil, fmt.Errorf("getsockname: %w", err)
	}
	port := sa.(*syscall.SockaddrInet4).Port
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), func() { _ = syscall.Close(fd) }, nil
}
