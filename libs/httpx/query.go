package httpx

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/page"
)

func badQuery(param, format string, args ...any) error {
	e := apperr.New(apperr.QueryInvalidFilters, format, args...)
	e.Fields = []apperr.FieldError{{Field: param, Message: e.Message}}
	return e
}

// Paging reads `page` (default 0, at most page.MaxNumber) and `limit` (default
// defaultLimit, 1 to page.MaxSize).
func Paging(c *fiber.Ctx, defaultLimit int) (page.Request, error) {
	number, err := Int(c, "page", 0)
	if err != nil {
		return page.Request{}, err
	}
	if number < 0 || number > page.MaxNumber {
		return page.Request{}, badQuery("page", "page must be between 0 and %d, got %d.", page.MaxNumber, number)
	}
	size, err := Int(c, "limit", defaultLimit)
	if err != nil {
		return page.Request{}, err
	}
	if size < 1 || size > page.MaxSize {
		return page.Request{}, badQuery("limit", "limit must be between 1 and %d, got %d.", page.MaxSize, size)
	}
	return page.Request{Number: number, Size: size}, nil
}

// Int reads an integer query parameter, def when absent.
func Int(c *fiber.Ctx, name string, def int) (int, error) {
	raw := c.Query(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil {
		return 0, badQuery(name, "%s must be an integer, got %q.", name, raw)
	}
	return n, nil
}

// Bool reads a boolean query parameter, def when absent.
func Bool(c *fiber.Ctx, name string, def bool) (bool, error) {
	raw := c.Query(name)
	if raw == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(raw)
	if err != nil {
		return false, badQuery(name, "%s must be true or false, got %q.", name, raw)
	}
	return b, nil
}

// List reads a comma-separated list parameter (repeated parameters are joined), trimming
// blanks and dropping empty items. Absent means nil: no filter.
func List(c *fiber.Ctx, name string) []string {
	var out []string
	for _, raw := range c.Context().QueryArgs().PeekMulti(name) {
		for _, item := range strings.Split(string(raw), ",") {
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
	}
	return out
}

// Labels reads `labels=k1%3Dv1,k2%3Dv2` into a map; a pair without `=`, or a key that is
// not a label key (names.CheckLabelKey), answers 400.
func Labels(c *fiber.Ctx) (map[string]string, error) {
	items := List(c, "labels")
	if len(items) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(items))
	for _, item := range items {
		if decoded, err := url.QueryUnescape(item); err == nil {
			item = decoded
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, badQuery("labels", "labels must be key=value pairs, got %q.", item)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if err := names.CheckLabelKey(k); err != nil {
			return nil, badQuery("labels", "%s", err.Error())
		}
		if strings.ContainsRune(v, 0) {
			return nil, badQuery("labels", "label %q has a value with a NUL character.", k)
		}
		out[k] = v
	}
	return out, nil
}

// Direction reads an ASC/DESC parameter in any case; desc reports descending.
func Direction(c *fiber.Ctx, name string, defDesc bool) (desc bool, err error) {
	switch strings.ToUpper(strings.TrimSpace(c.Query(name))) {
	case "":
		return defDesc, nil
	case "ASC":
		return false, nil
	case "DESC":
		return true, nil
	default:
		return false, badQuery(name, "%s must be ASC or DESC, got %q.", name, c.Query(name))
	}
}

// SortField reads a field name that must be one of allowed; def when absent.
func SortField(c *fiber.Ctx, name string, allowed []string, def string) (string, error) {
	raw := strings.TrimSpace(c.Query(name))
	if raw == "" {
		return def, nil
	}
	if !slices.Contains(allowed, raw) {
		return "", badQuery(name, "%s must be one of %s, got %q.", name, strings.Join(allowed, ", "), raw)
	}
	return raw, nil
}

// epochSecondsBelow is where epoch values stop being read as seconds: older clients send
// seconds, and 10^11 seconds is the year 5138 while 10^11 milliseconds is 1973.
const epochSecondsBelow = 100_000_000_000

// EpochMillis reads a `fromDate`/`toDate` style parameter: epoch milliseconds, or seconds for
// values below 10^11. Absent means nil.
func EpochMillis(c *fiber.Ctx, name string) (*time.Time, error) {
	raw := strings.TrimSpace(c.Query(name))
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return nil, badQuery(name, "%s must be epoch milliseconds, got %q.", name, raw)
	}
	var t time.Time
	if n < epochSecondsBelow {
		t = time.Unix(n, 0).UTC()
	} else {
		t = time.UnixMilli(n).UTC()
	}
	return &t, nil
}
