package testkit

import "testing"

// ClosedAddr returns a loopback "127.0.0.1:port" that refuses connections until the test
// ends. Closing a listener is not enough for that: the port it frees can be handed to any
// listener opened meanwhile, by a parallel test or another test binary, which would then
// answer in its place. Where the platform allows it, the port stays bound, without
// listening, for the test's lifetime, so no listener can take it.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	addr, release, err := reserveClosedPort()
	if err != nil {
		t.Fatalf("testkit: reserve a closed port: %v", err)
	}
	t.Cleanup(release)
	return addr
}
