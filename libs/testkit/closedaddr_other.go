//go:build !unix

package testkit

import "net"

// reserveClosedPort has no way here to hold a port without listening on it: it returns a
// port that was free a moment ago.
func reserveClosedPort() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return "", nil, err
	}
	return addr, func() {}, nil
}
