package secrets

import (
	"slices"
	"strings"
)

// Masker hides secret values in text, each replaced by Mask wherever it appears. The zero
// Masker hides nothing.
type Masker struct{ r *strings.Replacer }

// NewMasker returns a Masker of values. Longer values are tried first, so that a value
// holding another is masked whole; empty ones are left out.
func NewMasker(values []string) Masker {
	olds := slices.DeleteFunc(slices.Clone(values), func(v string) bool { return v == "" })
	if len(olds) == 0 {
		return Masker{}
	}
	slices.SortFunc(olds, func(a, b string) int {
		if n := len(b) - len(a); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	olds = slices.Compact(olds)
	pairs := make([]string, 0, 2*len(olds))
	for _, v := range olds {
		pairs = append(pairs, v, Mask)
	}
	return Masker{r: strings.NewReplacer(pairs...)}
}

// Mask returns s with every value of m replaced by Mask.
func (m Masker) Mask(s string) string {
	if m.r == nil || s == "" {
		return s
	}
	return m.r.Replace(s)
}

// MaskText returns s with each of values found in it replaced by Mask (see NewMasker). A
// text that holds none of them, the common case, is answered as it is at the cost of a
// search for each.
func MaskText(s string, values []string) string {
	for _, v := range values {
		if v != "" && strings.Contains(s, v) {
			return NewMasker(values).Mask(s)
		}
	}
	return s
}
