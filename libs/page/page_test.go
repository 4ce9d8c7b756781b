package page_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/page"
)

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		req       page.Request
		content   int
		total     int64
		wantPages int
		wantFirst bool
		wantLast  bool
	}{
		{"first of five", page.Request{Number: 0, Size: 10}, 10, 42, 5, true, false},
		{"middle", page.Request{Number: 2, Size: 10}, 10, 42, 5, false, false},
		{"last partial", page.Request{Number: 4, Size: 10}, 2, 42, 5, false, true},
		{"empty", page.Request{Number: 0, Size: 10}, 0, 0, 0, true, true},
		{"beyond the end", page.Request{Number: 9, Size: 10}, 0, 42, 5, false, true},
		{"exact fit", page.Request{Number: 1, Size: 21}, 21, 42, 2, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := page.New(make([]int, tt.content), tt.req, tt.total)
			assert.Equal(t, tt.wantPages, p.TotalPages)
			assert.Equal(t, tt.total, p.TotalElements)
			assert.Equal(t, tt.content, p.NumberOfElements)
			assert.Equal(t, tt.wantFirst, p.First)
			assert.Equal(t, tt.wantLast, p.Last)
			assert.Equal(t, tt.content == 0, p.Empty)
			assert.Equal(t, tt.req.Offset(), p.Pageable.Offset)
			assert.NotNil(t, p.Content)
		})
	}
}

func TestMapKeepsPaging(t *testing.T) {
	t.Parallel()
	p := page.New([]int{1, 2}, page.Request{Number: 1, Size: 2, Sort: "name"}, 5)
	m := page.Map(p, func(i int) string { return string(rune('a' + i)) })
	assert.Equal(t, []string{"b", "c"}, m.Content)
	assert.Equal(t, p.TotalPages, m.TotalPages)
	assert.True(t, m.Sort.Sorted)
	assert.Equal(t, p.Pageable, m.Pageable)
}
