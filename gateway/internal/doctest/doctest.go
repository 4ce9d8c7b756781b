// Package doctest finds the shell examples of Baton's documentation (README.md and
// docs/*.md) so that a test can run them, in reading order, against a fresh instance.
//
// An example is a fenced block whose info string is `sh` (or `bash`, `shell`). A block
// whose info string also holds the word `skip` (```sh skip) is shown to readers but not
// run: `make run` itself, Docker Compose, a real code host. Blocks of other languages
// (```json, plain ```) are never run.
package doctest

import (
	"bufio"
	"bytes"
	"strings"
)

// Block is one shell example of a Markdown file.
type Block struct {
	// Line is the line of the opening fence, counted from 1.
	Line int
	// Code is the block's text, each line ended by a newline.
	Code string
	// Skip is set when the fence is marked skip.
	Skip bool
}

var shells = map[string]bool{"sh": true, "bash": true, "shell": true}

// Blocks answers the shell examples of a Markdown document, in their order. A fence is
// three or more backticks or tildes; it closes on a line of the same character at least as
// long, as CommonMark reads it.
func Blocks(md []byte) []Block {
	var (
		out   []Block
		open  string // the opening fence while inside a block
		cur   *Block
		code  strings.Builder
		lines = bufio.NewScanner(bytes.NewReader(md))
	)
	lines.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		trimmed := strings.TrimLeft(line, " ")
		if open == "" {
			fence, info := fenceOf(trimmed)
			if fence == "" {
				continue
			}
			open = fence
			words := strings.Fields(info)
			if len(words) > 0 && shells[words[0]] {
				cur = &Block{Line: n}
				for _, w := range words[1:] {
					if w == "skip" {
						cur.Skip = true
					}
				}
				code.Reset()
			}
			continue
		}
		if closes(trimmed, open) {
			if cur != nil {
				cur.Code = code.String()
				out = append(out, *cur)
				cur = nil
			}
			open = ""
			continue
		}
		if cur != nil {
			code.WriteString(line + "\n")
		}
	}
	return out
}

// fenceOf answers the fence a line opens and its info string, or "" when it opens none.
func fenceOf(line string) (fence, info string) {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			info = strings.TrimSpace(line[n:])
			if c == "`" && strings.Contains(info, "`") {
				return "", ""
			}
			return line[:n], info
		}
	}
	return "", ""
}

// closes tells whether line closes a block opened by fence.
func closes(line, fence string) bool {
	line = strings.TrimRight(line, " \t")
	return len(line) >= len(fence) && strings.Trim(line, fence[:1]) == "" && strings.HasPrefix(line, fence)
}
