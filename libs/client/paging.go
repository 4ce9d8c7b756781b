package client

import (
	"context"
	"iter"

	pagepkg "github.com/baton-flow/baton/libs/page"
)

// all yields each item of the pages fetch answers, from page start on, until the last
// page; an error is yielded once and ends the sequence.
//
// Searches page by number over a stable order (creationDate, or the sort asked for), so an
// item created or deleted while a sequence is read may shift the later pages by one: a
// sequence may then see an item twice or miss one. totalElements is exact at each page.
func all[T any](ctx context.Context, start int, fetch func(ctx context.Context, page int) (*Page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for page := start; page <= pagepkg.MaxNumber; page++ {
			p, err := fetch(ctx, page)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range p.Content {
				if !yield(item, nil) {
					return
				}
			}
			if p.Last || len(p.Content) == 0 || page+1 >= p.TotalPages {
				return
			}
		}
	}
}

// Collect reads every item of seq into a slice, stopping at the first error.
func Collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for item, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, item)
	}
	return out, nil
}
