// Package page holds the paging request and the page envelope every `query` endpoint
// answers with. It has no transport or storage imports so every layer can use it.
package page

// Request is one page of a search: which page, how large, and the ordering.
type Request struct {
	// Number is the zero-based page number.
	Number int
	// Size is the page size, 1 to MaxSize.
	Size int
	// Sort is the field to order by; empty means the store's natural order.
	Sort string
	// Desc orders descending when true.
	Desc bool
}

// MaxSize is the largest page a caller may ask for.
const MaxSize = 1000

// MaxNumber is the largest page number a caller may ask for: it keeps Number*Size (at
// most 10^9) far from overflowing any integer a store computes an offset in.
const MaxNumber = 1_000_000

// Offset is the number of items before the page.
func (r Request) Offset() int64 { return int64(r.Number) * int64(r.Size) }

// SortInfo describes the ordering of a page, as Spring Data clients expect it.
type SortInfo struct {
	Sorted   bool `json:"sorted"`
	Unsorted bool `json:"unsorted"`
	Empty    bool `json:"empty"`
}

// Pageable repeats the request inside the envelope, as v4 clients read it.
type Pageable struct {
	PageNumber int      `json:"pageNumber"`
	PageSize   int      `json:"pageSize"`
	Offset     int64    `json:"offset"`
	Paged      bool     `json:"paged"`
	Unpaged    bool     `json:"unpaged"`
	Sort       SortInfo `json:"sort"`
}

// Page is the envelope of every search answer. TotalElements is always exact.
type Page[T any] struct {
	Content          []T      `json:"content"`
	Number           int      `json:"number"`
	Size             int      `json:"size"`
	TotalElements    int64    `json:"totalElements"`
	TotalPages       int      `json:"totalPages"`
	NumberOfElements int      `json:"numberOfElements"`
	First            bool     `json:"first"`
	Last             bool     `json:"last"`
	Empty            bool     `json:"empty"`
	Sort             SortInfo `json:"sort"`
	Pageable         Pageable `json:"pageable"`
}

// New wraps one page of content, found with r, out of total matching items.
func New[T any](content []T, r Request, total int64) Page[T] {
	if content == nil {
		content = []T{}
	}
	size := r.Size
	if size < 1 {
		size = 1
	}
	pages := int((total + int64(size) - 1) / int64(size))
	sort := SortInfo{Sorted: r.Sort != "", Unsorted: r.Sort == "", Empty: r.Sort == ""}
	return Page[T]{
		Content:          content,
		Number:           r.Number,
		Size:             r.Size,
		TotalElements:    total,
		TotalPages:       pages,
		NumberOfElements: len(content),
		First:            r.Number == 0,
		Last:             r.Number >= pages-1,
		Empty:            len(content) == 0,
		Sort:             sort,
		Pageable: Pageable{
			PageNumber: r.Number,
			PageSize:   r.Size,
			Offset:     r.Offset(),
			Paged:      true,
			Sort:       sort,
		},
	}
}

// Map converts the content of p with fn, keeping the paging fields.
func Map[T, U any](p Page[T], fn func(T) U) Page[U] {
	out := make([]U, len(p.Content))
	for i, item := range p.Content {
		out[i] = fn(item)
	}
	return Page[U]{
		Content: out, Number: p.Number, Size: p.Size, TotalElements: p.TotalElements,
		TotalPages: p.TotalPages, NumberOfElements: p.NumberOfElements, First: p.First, Last: p.Last,
		Empty: p.Empty, Sort: p.Sort, Pageable: p.Pageable,
	}
}
