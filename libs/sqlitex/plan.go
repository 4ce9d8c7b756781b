package sqlitex

import "strings"

// Unindexed returns the steps of a plan that read a whole table (SCAN) or sort in a
// temporary tree: none for a statement that goes by an index.
func Unindexed(plan []string) []string {
	var out []string
	for _, step := range plan {
		if strings.HasPrefix(step, "SCAN ") || strings.Contains(step, "TEMP B-TREE") {
			out = append(out, step)
		}
	}
	return out
}
