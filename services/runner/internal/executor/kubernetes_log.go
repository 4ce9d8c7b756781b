package executor

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// logReader copies a step's log to out line by line, taking out the result lines the
// Kubernetes wrapper prints: "<marker> <base64 name> <base64 value>".
type logReader struct {
	out    io.Writer
	marker string
	want   []string

	// consumed counts the bytes of the log read, for following it again past them.
	consumed int64
	results  map[string]string
	// err is the first result that cannot be taken, which fails the attempt.
	err error
}

// maxLogLine is the longest line read whole; a longer one is copied in pieces (and is not
// a result line: the wrapper's are at most MaxResultSize+3 bytes encoded, and names).
const maxLogLine = 128 << 10

func (lr *logReader) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, maxLogLine)
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) && !errors.Is(err, io.EOF) {
			// The line cut short is read again when the log is followed again.
			return err
		}
		if len(line) > 0 {
			lr.consumed += int64(len(line))
			if werr := lr.line(line, errors.Is(err, bufio.ErrBufferFull)); werr != nil {
				return werr
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// line handles one line of the log, or with partial a piece of a longer one.
func (lr *logReader) line(line []byte, partial bool) error {
	i := -1
	if lr.marker != "" && !partial {
		i = bytes.Index(line, []byte(lr.marker))
	}
	if i < 0 {
		_, err := lr.out.Write(line)
		return err
	}
	// Output the step did not end with a newline comes before the marker.
	if i > 0 {
		if _, err := lr.out.Write(line[:i]); err != nil {
			return err
		}
	}
	lr.result(strings.TrimSpace(string(line[i+len(lr.marker):])))
	return nil
}

func (lr *logReader) result(fields string) {
	encName, encValue, _ := strings.Cut(fields, " ")
	rawName, err := base64.StdEncoding.DecodeString(encName)
	name := string(rawName)
	if err != nil || !slices.Contains(lr.want, name) {
		// A file the step left in results/ that is no declared result.
		return
	}
	raw, err := base64.StdEncoding.DecodeString(encValue)
	if err != nil {
		lr.fail(fmt.Errorf("result %s: cannot be read from the log: %w", name, err))
		return
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	if len(v) > MaxResultSize {
		lr.fail(fmt.Errorf("result %s: is larger than %d KiB", name, MaxResultSize>>10))
		return
	}
	if lr.results == nil {
		lr.results = map[string]string{}
	}
	lr.results[name] = v
}

func (lr *logReader) fail(err error) {
	if lr.err == nil {
		lr.err = err
	}
}

// skipWriter drops the first skip bytes written to it: those sent before the runner
// restarted.
type skipWriter struct {
	w    io.Writer
	skip int64
}

func (s *skipWriter) Write(p []byte) (int, error) {
	n := len(p)
	if s.skip >= int64(n) {
		s.skip -= int64(n)
		return n, nil
	}
	p = p[s.skip:]
	s.skip = 0
	if _, err := s.w.Write(p); err != nil {
		return 0, err
	}
	return n, nil
}
