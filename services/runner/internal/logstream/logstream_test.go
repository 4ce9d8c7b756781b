package logstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sink records the chunks sent.
type sink struct {
	mu     sync.Mutex
	chunks []string
	seqs   []int
	fail   bool
}

func (s *sink) send(_ context.Context, seq int, chunk string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seqs = append(s.seqs, seq)
	if s.fail {
		return errors.New("broker away")
	}
	s.chunks = append(s.chunks, chunk)
	return nil
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.chunks...)
}

func TestMasking(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		secrets []string
		writes  []string
		want    string
	}{
		{name: "secret split across writes", secrets: []string{"s3cret"}, writes: []string{"token=s3", "cret ok\n"}, want: "token=******** ok\n"},
		{name: "every occurrence", secrets: []string{"pw"}, writes: []string{"pw pw\npw"}, want: "******** ********\n********"},
		{name: "longest secret first", secrets: []string{"abc", "abcdef"}, writes: []string{"abcdef abc\n"}, want: "******** ********\n"},
		{name: "empty secrets are ignored", secrets: []string{"", "x1"}, writes: []string{"a x1 b\n"}, want: "a ******** b\n"},
		{name: "multi-line secret line by line", secrets: []string{"-----BEGIN-----\nAAAABBBB\n}\n"}, writes: []string{"-----BEGIN-----\nAAAA", "BBBB\n}\n"}, want: "********\n********\n}\n"},
		{name: "no secrets", writes: []string{"plain\n"}, want: "plain\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s sink
			w := New(t.Context(), Options{Send: s.send, Secrets: tt.secrets})
			for _, p := range tt.writes {
				n, err := w.Write([]byte(p))
				require.NoError(t, err)
				require.Equal(t, len(p), n)
			}
			w.Close()
			assert.Equal(t, tt.want, strings.Join(s.got(), ""))
		})
	}
}

func TestLongLineIsNotHeldBack(t *testing.T) {
	t.Parallel()
	var s sink
	w := New(t.Context(), Options{Send: s.send, Secrets: []string{"secret"}, ChunkSize: 8, Interval: time.Hour})
	_, _ = w.Write([]byte("secret-and-more-without-a-newline"))
	// A line past a chunk is masked and its full chunks sent before Write returns, without
	// waiting for its end (the rest may follow at once).
	assert.Equal(t, []string{"********", "-and-mor", "e-withou"}, s.got()[:3])
	w.Close()
	assert.Equal(t, "********-and-more-without-a-newline", strings.Join(s.got(), ""))
}

func TestCap(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		max    int
		writes []string
		want   string
	}{
		{name: "under the cap", max: 10, writes: []string{"0123456789"}, want: "0123456789"},
		{name: "cut mid-line", max: 10, writes: []string{"01234\n", "56789abc\n", "dropped\n"}, want: "01234\n5678\n[log truncated at 10 bytes]\n"},
		{name: "cut at a line end", max: 6, writes: []string{"01234\n", "dropped\n"}, want: "01234\n[log truncated at 6 bytes]\n"},
		{name: "MiB", max: 1 << 20, writes: []string{strings.Repeat("x", 1<<20) + "\n"}, want: strings.Repeat("x", 1<<20) + "\n[log truncated at 1 MiB]\n"},
		{name: "masked size counts", max: 9, writes: []string{"secret\n", "more\n"}, want: "********\n[log truncated at 9 bytes]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var s sink
			w := New(t.Context(), Options{Send: s.send, Max: tt.max, Secrets: []string{"secret"}})
			for _, p := range tt.writes {
				_, _ = w.Write([]byte(p))
			}
			w.Close()
			assert.Equal(t, tt.want, strings.Join(s.got(), ""))
		})
	}
}

func TestBatching(t *testing.T) {
	t.Parallel()
	// synctest runs the writer's timer on a virtual clock: the sleeps below take no time.
	synctest.Test(t, func(t *testing.T) {
		var s sink
		w := New(t.Context(), Options{Send: s.send, ChunkSize: 16})
		_, _ = w.Write([]byte("a\nb\n"))
		synctest.Wait()
		assert.Equal(t, []string{"a\nb\n"}, s.got(), "the first lines go at once")

		_, _ = w.Write([]byte("c\n"))
		time.Sleep(DefaultInterval / 2)
		_, _ = w.Write([]byte("d\n"))
		synctest.Wait()
		assert.Equal(t, []string{"a\nb\n"}, s.got(), "lines within the interval after a send wait for it")

		time.Sleep(DefaultInterval / 2)
		synctest.Wait()
		assert.Equal(t, []string{"a\nb\n", "c\nd\n"}, s.got(), "and then go together")

		_, _ = w.Write([]byte(strings.Repeat("0123456\n", 5)))
		assert.Equal(t, []string{"a\nb\n", "c\nd\n", "0123456\n0123456\n", "0123456\n0123456\n"}, s.got(), "full chunks go at once")

		time.Sleep(2 * DefaultInterval)
		synctest.Wait()
		assert.Equal(t, []string{"a\nb\n", "c\nd\n", "0123456\n0123456\n", "0123456\n0123456\n", "0123456\n"}, s.got())
		_, _ = w.Write([]byte("e\n"))
		synctest.Wait()
		assert.Len(t, s.got(), 5, "within the interval of the last chunk")
		w.Close()
		assert.Equal(t, "e\n", s.got()[5], "Close sends the rest at once")
	})
}

func TestChunksKeepRunes(t *testing.T) {
	t.Parallel()
	var s sink
	w := New(t.Context(), Options{Send: s.send, ChunkSize: 5})
	_, _ = w.Write([]byte("ééééé\n"))
	w.Close()
	for _, c := range s.got() {
		assert.True(t, utf8.ValidString(c), "chunk %q", c)
	}
	assert.Equal(t, "ééééé\n", strings.Join(s.got(), ""))
}

func TestFailedSendKeepsItsNumber(t *testing.T) {
	t.Parallel()
	s := sink{fail: true}
	w := New(t.Context(), Options{Send: s.send, ChunkSize: 2})
	_, _ = w.Write([]byte("a\n"))
	s.mu.Lock()
	s.fail = false
	s.mu.Unlock()
	_, _ = w.Write([]byte("b\n"))
	w.Close()
	assert.Equal(t, []int{0, 1}, s.seqs)
	assert.Equal(t, []string{"b\n"}, s.got())
}

func TestAbort(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var s sink
		w := New(t.Context(), Options{Send: s.send, Interval: time.Hour})
		_, _ = w.Write([]byte("sent\n"))
		synctest.Wait()
		_, _ = w.Write([]byte("pending\npartial"))
		w.Abort()
		_, _ = w.Write([]byte("later\n"))
		w.Close()
		assert.Equal(t, []string{"sent\n"}, s.got())
	})
}

// A log taken up again numbers its chunks on, and Drained tells, after each send that
// left nothing buffered, the next number and the bytes given until then; a partial line
// still buffered is not counted as sent.
func TestDrainedAndFirstSeq(t *testing.T) {
	t.Parallel()
	var s sink
	type drained struct {
		next    int
		written int64
	}
	var told []drained
	w := New(t.Context(), Options{Send: s.send, FirstSeq: 7, Interval: time.Hour,
		Drained: func(next int, written int64) { told = append(told, drained{next, written}) }})
	_, _ = w.Write([]byte("one\n"))
	w.flush(true)
	_, _ = w.Write([]byte("two\nthr"))
	w.flush(true)
	w.Close()
	assert.Equal(t, []int{7, 8, 9}, s.seqs)
	assert.Equal(t, []string{"one\n", "two\n", "thr"}, s.got())
	assert.Equal(t, []drained{{8, 4}, {10, 11}}, told, "the partial line held back the second")
}
