package client

import (
	"bufio"
	"context"
	"io"
	"iter"
	"net/http"
)

// maxLogLine is the longest log line TaskRunLogLines reads: the whole log a task run
// keeps (10 MiB).
const maxLogLine = 10 << 20

// GetTaskRunLog reads a task run's log as it is now (empty for a task that never ran);
// every secret the run knows of reads ******** in it. getTaskRunLog.
func (c *Client) GetTaskRunLog(ctx context.Context, taskRunID string) ([]byte, error) {
	return c.raw(ctx, request{method: http.MethodGet, path: p("taskrun", taskRunID, "log"), accept: "text/plain"})
}

// FollowTaskRunLog opens a task run's log and follows it as it is written (getTaskRunLog
// with follow=true): what is logged so far at once, then each chunk as the runner sends
// it. Reading ends with io.EOF when the task ends; with io.ErrUnexpectedEOF (or another
// error) when the stream was cut short: the server shutting down, the connection lost.
// Follow again to read on. Close the reader, or end ctx, to stop following.
//
// The stream lasts as long as the task: an *http.Client given WithHTTPClient must have no
// Timeout shorter than that.
func (c *Client) FollowTaskRunLog(ctx context.Context, taskRunID string) (io.ReadCloser, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: p("taskrun", taskRunID, "log"),
		query: newQuery().str("follow", "true").values(), accept: "text/plain"})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// TaskRunLogLines yields a task run's log line by line, without line ends; with follow it
// follows the log until the task ends, as FollowTaskRunLog does. A stream cut short is
// yielded as its error. Breaking out of the loop closes the stream.
func (c *Client) TaskRunLogLines(ctx context.Context, taskRunID string, follow bool) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		var body io.ReadCloser
		if follow {
			rc, err := c.FollowTaskRunLog(ctx, taskRunID)
			if err != nil {
				yield("", err)
				return
			}
			body = rc
		} else {
			resp, err := c.do(ctx, request{method: http.MethodGet, path: p("taskrun", taskRunID, "log"), accept: "text/plain"})
			if err != nil {
				yield("", err)
				return
			}
			body = resp.Body
		}
		defer body.Close()
		s := bufio.NewScanner(body)
		s.Buffer(make([]byte, 0, 64<<10), maxLogLine)
		for s.Scan() {
			if !yield(s.Text(), nil) {
				return
			}
		}
		if err := s.Err(); err != nil {
			yield("", err)
		}
	}
}
