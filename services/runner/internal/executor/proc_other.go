//go:build !unix

package executor

import "os/exec"

// setProcessGroup keeps exec's default: only the step's own process is killed.
func setProcessGroup(*exec.Cmd) {}

func killGroup(int) error { return nil }
