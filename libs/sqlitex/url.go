package sqlitex

import (
	"fmt"
	"path/filepath"
	"strings"
)

// PathFromURL reads a service's database URL that names a SQLite file: sqlite:<path> or
// file:<path> (sqlite:///abs/path too). ok is false for the empty URL, which keeps the
// service on the shared MongoDB; any other URL is refused, as is a query, which could
// weaken the file's durability.
func PathFromURL(url string) (path string, ok bool, err error) {
	if url == "" {
		return "", false, nil
	}
	for _, scheme := range []string{"sqlite:", "file:"} {
		rest, found := strings.CutPrefix(url, scheme)
		if !found {
			continue
		}
		if strings.HasPrefix(rest, "///") {
			rest = rest[2:]
		}
		if rest == "" || strings.HasPrefix(rest, "//") || strings.ContainsAny(rest, "?#") {
			return "", false, fmt.Errorf("want sqlite:<path to a file>, got %q", url)
		}
		return filepath.Clean(rest), true, nil
	}
	return "", false, fmt.Errorf("want sqlite:<path> or file:<path>, got %q (MongoDB is configured by BATON_MONGO_URI)", url)
}
