package httpx

import (
	"net/url"
	"strings"

	"github.com/baton-flow/baton/libs/secrets"
)

// RedactedURI returns path and query for a log line or a trace, with the value of every
// access_token parameter replaced by the one mask of secrets: query tokens are credentials
// and never reach a log (API.md §2).
func RedactedURI(path string, query []byte) string {
	if len(query) == 0 {
		return path
	}
	var b strings.Builder
	b.Grow(len(path) + 1 + len(query))
	b.WriteString(path)
	b.WriteByte('?')
	for i, pair := range strings.Split(string(query), "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		key, _, hasValue := strings.Cut(pair, "=")
		// Compare the decoded key, so access%5Ftoken cannot slip through.
		if k, err := url.QueryUnescape(key); hasValue && (err != nil || strings.EqualFold(k, "access_token")) {
			b.WriteString(key)
			b.WriteByte('=')
			b.WriteString(secrets.Mask)
			continue
		}
		b.WriteString(pair)
	}
	return b.String()
}
