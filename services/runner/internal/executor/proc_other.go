//go:build !unix

package executor

import "os/exec"

// setProcessGroup keeps exec's default: only the step's own process is killed.
func setProcessGroup(*exec.Cmd) {}

func killGroup(int) error { return nil }

// groupAlive cannot look here: the step's exit file alone tells it ended.
func groupAlive(int) bool { return true }
