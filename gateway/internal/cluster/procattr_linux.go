package cluster

import "syscall"

// procAttr puts a child in a process group of its own, so that a kill reaches what it
// started (a runner's task scripts are in groups of their own and outlive it, as they
// would a container's runner), and makes the kernel kill it when the thread that started
// it exits: nothing outlives a supervisor that was itself killed.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
