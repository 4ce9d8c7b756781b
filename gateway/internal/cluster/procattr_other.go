//go:build !linux

package cluster

import "syscall"

// procAttr puts a child in a process group of its own, so that a kill reaches what it
// started.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
