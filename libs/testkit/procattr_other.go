//go:build !linux

package testkit

import "syscall"

// dieWithParent has no portable equivalent of Linux's Pdeathsig; Main stops the agent,
// but one left by a killed test binary has to be stopped by hand.
func dieWithParent() *syscall.SysProcAttr { return nil }
