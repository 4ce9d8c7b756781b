// Package logstream turns a step's output into numbered log chunks: secrets masked line by
// line, the whole capped, and chunks sent as lines come — at once when none was sent
// within an interval, else once it has passed, or as soon as a chunk is full.
package logstream

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/baton-flow/baton/libs/secrets"
)

// Defaults of Options.
const (
	DefaultChunkSize = 32 << 10
	DefaultInterval  = 100 * time.Millisecond
)

// minSecretLine is the shortest line of a multi-line secret masked on its own: shorter
// ones ("}", "-----") would mask ordinary output without protecting anything.
const minSecretLine = 4

// Send delivers chunk number seq (from 0) of the log.
type Send func(ctx context.Context, seq int, chunk string) error

// Options configure a Writer.
type Options struct {
	// Send delivers the chunks, one at a time and in order.
	Send Send
	// Secrets are replaced by secrets.Mask wherever they appear within a line.
	Secrets []string
	// Max caps the log in bytes; past it one line says so and the rest is dropped. Zero
	// means no cap.
	Max int
	// ChunkSize bounds a chunk; zero means DefaultChunkSize.
	ChunkSize int
	// Interval is the least time between two chunks not full: output that comes within it
	// after a send waits for it, and goes in one chunk, so a chatty step sends a few chunks
	// a second rather than one per line. Zero means DefaultInterval.
	Interval time.Duration
	// Logger receives send failures; nil means slog.Default().
	Logger *slog.Logger
	// FirstSeq numbers the first chunk: a log taken up again after a restart goes on
	// where it stopped.
	FirstSeq int
	// Drained, when set, is told after sends that left nothing buffered: the next chunk's
	// number and how many bytes Write was given until then, all of them sent.
	Drained func(next int, written int64)
}

// Writer is an io.Writer that sends what it is given as log chunks. Close sends the rest.
type Writer struct {
	ctx   context.Context
	opts  Options
	mask  secrets.Masker
	stop  chan struct{}
	wake  chan struct{}
	timer sync.WaitGroup

	mu        sync.Mutex
	line      []byte // the current line, not masked yet
	batch     []byte // masked output not sent yet
	written   int    // bytes admitted under the cap
	given     int64  // bytes given to Write
	truncated bool
	aborted   bool

	sendMu  sync.Mutex // one sender at a time keeps the chunks in order
	seq     int
	drained int // the seq last told to Drained
}

// New returns a Writer that sends with ctx until Close.
func New(ctx context.Context, opts Options) *Writer {
	opts.ChunkSize = cmp.Or(opts.ChunkSize, DefaultChunkSize)
	opts.Interval = cmp.Or(opts.Interval, DefaultInterval)
	opts.Logger = cmp.Or(opts.Logger, slog.Default())
	w := &Writer{ctx: ctx, opts: opts, mask: masker(opts.Secrets), stop: make(chan struct{}), wake: make(chan struct{}, 1),
		seq: opts.FirstSeq, drained: opts.FirstSeq}
	w.timer.Go(w.pump)
	return w
}

// masker masks the secrets in output read line by line: a multi-line secret is masked
// line by line.
func masker(values []string) secrets.Masker {
	var olds []string
	for _, s := range values {
		if !strings.Contains(s, "\n") {
			olds = append(olds, s)
			continue
		}
		for l := range strings.Lines(s) {
			if l = strings.TrimRight(l, "\r\n"); len(l) >= minSecretLine {
				olds = append(olds, l)
			}
		}
	}
	return secrets.NewMasker(olds)
}

// Write takes p whole and never fails: what is past the cap or comes after Abort is
// dropped.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	w.given += int64(n)
	for len(p) > 0 && !w.truncated && !w.aborted {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			// A line may not wait forever: past a chunk it is masked as it stands.
			if len(w.line) >= w.opts.ChunkSize {
				w.admit()
			}
			break
		}
		w.line = append(w.line, p[:i+1]...)
		p = p[i+1:]
		w.admit()
	}
	full, some := len(w.batch) >= w.opts.ChunkSize, len(w.batch) > 0
	w.mu.Unlock()
	if full {
		w.flush(false)
	}
	if some {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	return n, nil
}

// admit masks the current line into the batch, within the cap. w.mu is held.
func (w *Writer) admit() {
	s := string(w.line)
	w.line = w.line[:0]
	s = w.mask.Mask(s)
	if w.opts.Max > 0 && w.written+len(s) > w.opts.Max {
		s = s[:cut(s, w.opts.Max-w.written)]
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += fmt.Sprintf("[log truncated at %s]\n", size(w.opts.Max))
		w.truncated = true
	}
	w.written += len(s)
	w.batch = append(w.batch, s...)
}

// flush sends full chunks, and with all the partial rest too.
func (w *Writer) flush(all bool) {
	w.sendMu.Lock()
	defer w.sendMu.Unlock()
	for {
		w.mu.Lock()
		if w.aborted || len(w.batch) == 0 || !all && len(w.batch) < w.opts.ChunkSize {
			empty, given := !w.aborted && len(w.batch) == 0 && len(w.line) == 0, w.given
			w.mu.Unlock()
			if empty && w.seq != w.drained && w.opts.Drained != nil {
				w.drained = w.seq
				w.opts.Drained(w.seq, given)
			}
			return
		}
		n := cut(w.batch, w.opts.ChunkSize)
		chunk := string(w.batch[:n])
		w.batch = w.batch[n:]
		w.mu.Unlock()
		if err := w.opts.Send(w.ctx, w.seq, chunk); err != nil {
			w.opts.Logger.Warn("send log chunk", "seq", w.seq, "err", err)
		}
		// A failed send may still have been delivered: its number is not reused.
		w.seq++
	}
}

// pump sends what Write buffered: at once when the last send is an interval old, else
// when it will be. Nothing is looked at while nothing is written.
func (w *Writer) pump() {
	var last time.Time
	for {
		select {
		case <-w.wake:
		case <-w.stop:
			return
		}
		if wait := w.opts.Interval - time.Since(last); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-w.stop:
				t.Stop()
				return
			}
		}
		w.flush(true)
		last = time.Now()
	}
}

// Abort drops what is not sent yet and everything written from now on.
func (w *Writer) Abort() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.aborted = true
	w.line, w.batch = nil, nil
}

// Close sends the last partial line and everything still buffered, and returns once it
// is sent. It must be called once, after the last Write.
func (w *Writer) Close() {
	close(w.stop)
	w.timer.Wait()
	w.mu.Lock()
	if len(w.line) > 0 && !w.truncated && !w.aborted {
		w.admit()
	}
	w.mu.Unlock()
	w.flush(true)
}

// cut returns the length of the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 sequence.
func cut[T string | []byte](s T, n int) int {
	switch {
	case n >= len(s):
		return len(s)
	case n <= 0:
		return 0
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// size spells a byte count the way people configure it.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
