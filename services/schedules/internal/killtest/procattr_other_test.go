//go:build !linux

package killtest

import "syscall"

// dieWithParent has no portable equivalent of Linux's Pdeathsig: the test's cleanup kills
// its replicas, but those of a test binary that was itself killed are left running.
func dieWithParent() *syscall.SysProcAttr { return nil }
