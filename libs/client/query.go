package client

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// query builds a request's query string; empty values are left out, so the server's
// defaults apply.
type query url.Values

func (q query) str(k, v string) query {
	if v != "" {
		url.Values(q).Set(k, v)
	}
	return q
}

func (q query) list(k string, vs []string) query {
	if len(vs) > 0 {
		url.Values(q).Set(k, strings.Join(vs, ","))
	}
	return q
}

// labels writes pairs as `k=v,k2=v2`, sorted by key so that a request reads the same each
// time.
func (q query) labels(pairs map[string]string) query {
	if len(pairs) == 0 {
		return q
	}
	kv := make([]string, 0, len(pairs))
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		kv = append(kv, k+"="+pairs[k])
	}
	return q.list("labels", kv)
}

func (q query) int(k string, n int) query {
	if n != 0 {
		url.Values(q).Set(k, strconv.Itoa(n))
	}
	return q
}

// page writes page and limit; page 0 is the server's default and is left out.
func (q query) page(page, limit int) query { return q.int("page", page).int("limit", limit) }

func (q query) boolean(k string, v *bool) query {
	if v != nil {
		url.Values(q).Set(k, strconv.FormatBool(*v))
	}
	return q
}

// time writes t as epoch milliseconds, as the API's fromDate and toDate are.
func (q query) time(k string, t time.Time) query {
	if !t.IsZero() {
		url.Values(q).Set(k, strconv.FormatInt(t.UnixMilli(), 10))
	}
	return q
}

func (q query) values() url.Values { return url.Values(q) }

func newQuery() query { return query(url.Values{}) }

// Bool answers a pointer to v, for the optional flags of requests and queries.
func Bool(v bool) *bool { return &v }

// Int64 answers a pointer to v, for the optional numbers of requests.
func Int64(v int64) *int64 { return &v }

// String answers a pointer to v, for the optional strings of requests (a team's labels).
func String(v string) *string { return &v }
