package cli_test

import (
	"strconv"
	"strings"
	"sync"
)

// screen is a terminal's screen as far as the live view drives it: printable text, carriage
// return, line feed, cursor up (CSI n A), erase below (CSI J) and erase line (CSI 2K);
// colours and other CSI sequences are read and dropped. It grows downwards without scrolling,
// so a view that redraws in place keeps its line count and one that appends grows.
type screen struct {
	mu       sync.Mutex
	lines    [][]rune
	row, col int
	pending  []byte // an escape sequence or UTF-8 rune not yet whole
	raw      strings.Builder
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw.Write(p)
	buf := append(s.pending, p...)
	s.pending = nil
	for len(buf) > 0 {
		switch c := buf[0]; {
		case c == '\x1b':
			n, ok := s.escape(buf)
			if !ok {
				s.pending = append([]byte(nil), buf...)
				return len(p), nil
			}
			buf = buf[n:]
		case c == '\r':
			s.col = 0
			buf = buf[1:]
		case c == '\n':
			s.row++
			buf = buf[1:]
		default:
			r, n := decodeRune(buf)
			if n == 0 {
				s.pending = append([]byte(nil), buf...)
				return len(p), nil
			}
			s.put(r)
			buf = buf[n:]
		}
	}
	return len(p), nil
}

func (s *screen) grow() {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, nil)
	}
}

func (s *screen) put(r rune) {
	s.grow()
	l := s.lines[s.row]
	for len(l) <= s.col {
		l = append(l, ' ')
	}
	l[s.col] = r
	s.lines[s.row] = l
	s.col++
}

// escape applies the CSI sequence at the start of b and returns its length; ok is false
// when it is not whole yet.
func (s *screen) escape(b []byte) (int, bool) {
	if len(b) < 2 {
		return 0, false
	}
	if b[1] != '[' {
		return 2, true
	}
	i := 2
	for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == ';' || b[i] == '?') {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	arg := string(b[2:i])
	switch b[i] {
	case 'A':
		n, err := strconv.Atoi(arg)
		if err != nil {
			n = 1
		}
		s.row = max(s.row-n, 0)
	case 'J':
		s.grow()
		s.lines[s.row] = truncate(s.lines[s.row], s.col)
		s.lines = s.lines[:s.row+1]
	case 'K':
		s.grow()
		s.lines[s.row] = nil
	}
	return i + 1, true
}

func truncate(l []rune, n int) []rune {
	if len(l) > n {
		return l[:n]
	}
	return l
}

func decodeRune(b []byte) (rune, int) {
	var n int
	switch {
	case b[0] < 0x80:
		n = 1
	case b[0]&0xE0 == 0xC0:
		n = 2
	case b[0]&0xF0 == 0xE0:
		n = 3
	default:
		n = 4
	}
	if len(b) < n {
		return 0, 0
	}
	return []rune(string(b[:n]))[0], n
}

// text is the screen's lines, trailing spaces and empty trailing lines dropped.
func (s *screen) text() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.lines))
	for _, l := range s.lines {
		out = append(out, strings.TrimRight(string(l), " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func (s *screen) bytes() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.raw.String()
}
