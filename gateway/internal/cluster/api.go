package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"time"
)

// api calls Baton's public API through the cluster's gateways with the admin token, as a
// client of a deployment with processes dying under it does: a request that got no answer,
// or a 5xx or 429, is sent again, to the next gateway, until ctx ends.
type api struct {
	gateways []string
	token    string
	client   *http.Client
	next     atomic.Uint64
	// retries counts requests sent again.
	retries atomic.Int64
}

// answer is what the API answered a request.
type answer struct {
	status int
	body   []byte
	// reached is set when a try that failed may have been carried out before its
	// answer was lost (the connection was not refused).
	reached bool
}

func (a answer) decode(out any) error {
	if err := json.Unmarshal(a.body, out); err != nil {
		return fmt.Errorf("decode %d answer %q: %w", a.status, truncate(a.body), err)
	}
	return nil
}

func (a answer) String() string { return fmt.Sprintf("%d %s", a.status, truncate(a.body)) }

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func newAPI(gateways []string, token string) *api {
	return &api{gateways: gateways, token: token,
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{IdleConnTimeout: 5 * time.Second, MaxIdleConnsPerHost: 32}}}
}

// do sends method path (under /api/v2) with body (JSON unless contentType says) until an
// answer below 500 other than 429 comes, or ctx ends.
func (c *api) do(ctx context.Context, method, path, contentType string, body any) (answer, error) {
	var raw []byte
	switch b := body.(type) {
	case nil:
	case string:
		raw = []byte(b)
	case []byte:
		raw = b
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			return answer{}, err
		}
	}
	if contentType == "" && raw != nil {
		contentType = "application/json"
	}
	var res answer
	for tries := 0; ; tries++ {
		if tries > 0 {
			c.retries.Add(1)
			select {
			case <-ctx.Done():
				return res, fmt.Errorf("%s %s: %w (last: %v)", method, path, ctx.Err(), res)
			case <-time.After(min(time.Duration(tries)*50*time.Millisecond, time.Second)):
			}
		}
		base := c.gateways[c.next.Add(1)%uint64(len(c.gateways))]
		req, err := http.NewRequestWithContext(ctx, method, base+"/api/v2"+path, bytes.NewReader(raw))
		if err != nil {
			return res, err
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := c.client.Do(req)
		if err != nil {
			res.reached = res.reached || !errors.Is(err, syscall.ECONNREFUSED)
			if ctx.Err() != nil {
				return res, fmt.Errorf("%s %s: %w", method, path, err)
			}
			continue
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests {
			res.status, res.body = resp.StatusCode, b
			res.reached = res.reached || resp.StatusCode != http.StatusServiceUnavailable
			continue
		}
		res.status, res.body = resp.StatusCode, b
		return res, nil
	}
}

// expect sends a request as do does and fails unless the answer's status is one of want.
func (c *api) expect(ctx context.Context, method, path string, body any, want ...int) (answer, error) {
	res, err := c.do(ctx, method, path, "", body)
	if err != nil {
		return res, err
	}
	for _, w := range want {
		if res.status == w {
			return res, nil
		}
	}
	return res, fmt.Errorf("%s %s: answered %v, want %v", method, path, res, want)
}

// get reads path into out.
func (c *api) get(ctx context.Context, path string, out any) error {
	res, err := c.expect(ctx, http.MethodGet, path, nil, http.StatusOK)
	if err != nil {
		return err
	}
	return res.decode(out)
}
