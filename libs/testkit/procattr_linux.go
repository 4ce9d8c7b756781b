package testkit

import "syscall"

// dieWithParent makes the kernel kill the child when the thread that started it exits,
// so an agent never outlives a test binary that crashed or was killed.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
