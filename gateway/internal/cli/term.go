package cli

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal and, if so, how to read its size (0, 0 when
// unknown).
func isTerminal(f *os.File) (bool, func() (int, int)) {
	if !term.IsTerminal(int(f.Fd())) {
		return false, nil
	}
	return true, func() (int, int) {
		w, h, err := term.GetSize(int(f.Fd()))
		if err != nil {
			return 0, 0
		}
		return w, h
	}
}
