package cli

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal and, if so, its width (0 when unknown).
func isTerminal(f *os.File) (bool, int) {
	if !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return true, 0
	}
	return true, w
}
