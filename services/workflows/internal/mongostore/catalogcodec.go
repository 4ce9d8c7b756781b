package mongostore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// A catalog snapshot is rewritten on every change of its namespace and read whole by every
// process whose cached copy is older, so at 10,000 workflows its encoding is what a save
// and a first query cost: JSON took ~20 ms to write and ~35 ms to read, this ~2 and ~5.
//
// Format (then zstd-compressed): the version byte 1, the entry count, and per entry its
// name, latest version, revisions (count, then version and revision pairs), status, labels
// (count, then key and value) and creation date in Unix milliseconds. Integers are
// varints, strings a length and bytes.
const catalogFormat = 1

var errCorrupt = errors.New("corrupt catalog snapshot")

func encodeEntries(entries []domain.Entry) []byte {
	b := make([]byte, 0, 16+len(entries)*48)
	b = append(b, catalogFormat)
	b = binary.AppendUvarint(b, uint64(len(entries)))
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	for _, e := range entries {
		str(e.Name)
		b = binary.AppendUvarint(b, uint64(e.Latest))
		b = binary.AppendUvarint(b, uint64(len(e.Revs)))
		for v, r := range e.Revs {
			b = binary.AppendUvarint(b, uint64(v))
			b = binary.AppendUvarint(b, uint64(r))
		}
		str(string(e.Status))
		b = binary.AppendUvarint(b, uint64(len(e.Labels)))
		for k, v := range e.Labels {
			str(k)
			str(v)
		}
		b = binary.AppendVarint(b, e.CreationDate.UnixMilli())
	}
	return encoder.EncodeAll(b, make([]byte, 0, len(b)/3))
}

// entryReader reads the format back. Label keys and values are interned: they repeat
// across workflows, and one string each saves most of a decode's allocations.
type entryReader struct {
	b       []byte
	err     error
	strings map[string]string
}

func (r *entryReader) uint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *entryReader) int() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errCorrupt
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *entryReader) bytes() []byte {
	n := r.uint()
	if r.err != nil || n > uint64(len(r.b)) {
		r.err = errCorrupt
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *entryReader) interned() string {
	raw := r.bytes()
	if s, ok := r.strings[string(raw)]; ok {
		return s
	}
	s := string(raw)
	r.strings[s] = s
	return s
}

func decodeEntries(packed []byte) ([]domain.Entry, error) {
	raw, err := decoder.DecodeAll(packed, nil)
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	if len(raw) == 0 || raw[0] != catalogFormat {
		return nil, fmt.Errorf("%w: unknown format", errCorrupt)
	}
	r := &entryReader{b: raw[1:], strings: map[string]string{}}
	n := r.uint()
	if n > uint64(len(raw)) {
		return nil, errCorrupt
	}
	out := make([]domain.Entry, 0, n)
	for range n {
		e := domain.Entry{Name: string(r.bytes()), Latest: int(r.uint())}
		if revs := r.uint(); revs > 0 && revs <= uint64(len(r.b)) {
			e.Revs = make(map[int]int, revs)
			for range revs {
				v := int(r.uint())
				e.Revs[v] = int(r.uint())
			}
		}
		e.Status = domain.Status(r.interned())
		if labels := r.uint(); labels > 0 && labels <= uint64(len(r.b)) {
			e.Labels = make(map[string]string, labels)
			for range labels {
				k := r.interned()
				e.Labels[k] = r.interned()
			}
		}
		e.CreationDate = time.UnixMilli(r.int()).UTC()
		if r.err != nil {
			return nil, r.err
		}
		out = append(out, e)
	}
	return out, nil
}
