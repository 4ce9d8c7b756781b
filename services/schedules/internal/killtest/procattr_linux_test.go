package killtest

import "syscall"

// dieWithParent makes the kernel kill a replica when the thread that started it exits, so
// none outlives a test binary that crashed or was killed.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
