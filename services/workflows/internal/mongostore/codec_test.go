package mongostore

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

func TestCatalogEncodingRoundTrips(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	tests := []struct {
		name string
		give []domain.Entry
	}{
		{"empty", []domain.Entry{}},
		{"plain", []domain.Entry{{Name: "a", Latest: 1, Status: domain.StatusActive, CreationDate: created}}},
		{"revisions and labels", []domain.Entry{
			{Name: "a", Latest: 7, Revs: map[int]int{3: 2, 7: 12}, Status: domain.StatusInactive,
				Labels: map[string]string{"env": "prod", "": "empty key"}, CreationDate: created},
			{Name: "b", Latest: 300, Status: domain.StatusActive, Labels: map[string]string{"env": "prod"}, CreationDate: created.Add(time.Hour)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeEntries(encodeEntries(tt.give))
			require.NoError(t, err)
			assert.Equal(t, tt.give, got)
		})
	}
}

func TestCatalogEncodingRefusesGarbage(t *testing.T) {
	t.Parallel()
	good := encodeEntries([]domain.Entry{{Name: "a", Latest: 1, Labels: map[string]string{"k": "v"}}})
	raw, err := decoder.DecodeAll(good, nil)
	require.NoError(t, err)
	for _, give := range [][]byte{
		nil,
		[]byte("not zstd"),
		encoder.EncodeAll([]byte{9, 1}, nil),      // unknown format
		encoder.EncodeAll(raw[:len(raw)-3], nil),  // truncated
		encoder.EncodeAll([]byte{1, 200, 1}, nil), // more entries than bytes
	} {
		_, err := decodeEntries(give)
		assert.Error(t, err, "%q", give)
	}
}

func TestLRUEvicts(t *testing.T) {
	t.Parallel()
	byCount := newLRU[int](2)
	byCount.put("a", 1)
	byCount.put("b", 2)
	byCount.get("a")
	byCount.put("c", 3)
	_, hasB := byCount.get("b")
	_, hasA := byCount.get("a")
	assert.False(t, hasB, "the least recently used goes")
	assert.True(t, hasA)

	bySize := newSizedLRU(100, 10, func(s string) int { return len(s) })
	for i := range 5 {
		bySize.put(fmt.Sprint(i), "abcd")
	}
	assert.LessOrEqual(t, bySize.bytes, 10)
	_, ok := bySize.get("4")
	assert.True(t, ok)
	bySize.put("big", "way more than ten bytes")
	v, ok := bySize.get("big")
	assert.True(t, ok, "one value larger than the budget is still kept")
	assert.Equal(t, "way more than ten bytes", v)
	bySize.remove("big")
	assert.Zero(t, bySize.bytes)
}

// A catalog read before a change, or cached by a change that lost the race to cache, does
// not replace a later one.
func TestRememberKeepsTheLatestCatalog(t *testing.T) {
	t.Parallel()
	at := func(seq int64) current {
		return current{catalog: domain.NewCatalog(seq, nil), snapshot: fmt.Sprint(seq)}
	}
	tests := []struct {
		name string
		puts []int64
		want int64
	}{
		{"in order", []int64{1, 2, 3}, 3},
		{"a late older one", []int64{1, 3, 2}, 3},
		{"the same again", []int64{4, 4}, 4},
	}
	for _, tt := range tests {
		s := &Definitions{cache: newLRU[current](4)}
		for _, seq := range tt.puts {
			s.remember("infra/1", at(seq))
		}
		got, ok := s.cache.get("infra/1")
		require.True(t, ok, tt.name)
		assert.Equal(t, tt.want, got.catalog.Seq, tt.name)
	}
}
