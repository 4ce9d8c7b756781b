package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"net/http"
	"time"
)

// maxEventLine is the longest line of a run's stream WatchWorkflowRun reads: a run's
// params and results are at most 1 MiB, its task runs' a few more.
const maxEventLine = 16 << 20

// reopenWait is the first wait before a stream cut short is opened again; it grows with
// each failure in a row.
const reopenWait = 100 * time.Millisecond

// WatchWorkflowRun follows a run's stream (watchWorkflowRun, Server-Sent Events): it
// yields the run (with its task runs, secrets masked) as it is, then each state the
// server sends as the run changes, until the run ends: the last run yielded is the ended
// one. A stream cut short (the server shutting down, the connection lost) is opened
// again with Last-Event-ID, which yields the run's current state again if it did not
// change meanwhile. Failures are handled as Watch handles them; Watch, which also works
// with servers that have no stream, is what most callers want.
//
// The stream lasts as long as the run: an *http.Client given WithHTTPClient must have no
// Timeout shorter than that.
func (c *Client) WatchWorkflowRun(ctx context.Context, team, runID string) iter.Seq2[*WorkflowRun, error] {
	return func(yield func(*WorkflowRun, error) bool) {
		if !c.followRun(ctx, team, runID, yield) {
			yield(nil, fmt.Errorf("client: run %s: the server has no stream of runs", runID))
		}
	}
}

// followRun follows the run's stream, yielding each state, until the run ends, yield
// says stop, or an error is yielded. It answers false, having yielded nothing, when the
// server has no such stream (its route not found, or an answer that is no stream).
func (c *Client) followRun(ctx context.Context, team, runID string, yield func(*WorkflowRun, error) bool) bool {
	var lastID string
	failures := 0
	opened := false
	for {
		resp, err := c.do(ctx, request{method: http.MethodGet, path: p("team", team, "workflowrun", runID, "watch"),
			accept: "text/event-stream", lastEventID: lastID})
		wait := reopenWait * time.Duration(1<<min(failures, 6))
		if err != nil {
			switch e, _ := AsError(err); {
			case !opened && e != nil && e.StatusCode == http.StatusNotFound && (e.Reason == "ROUTE_NOT_FOUND" || e.Reason == ""):
				return false
			case ctx.Err() != nil:
				yield(nil, ctx.Err())
				return true
			case transient(err) && failures < transientTries:
				failures++
				if e != nil && e.RetryAfter > wait {
					wait = e.RetryAfter
				}
			default:
				yield(nil, err)
				return true
			}
		} else if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); !opened && mt != "text/event-stream" {
			// Not a stream: a server (or a proxy before it) answering what it does not know.
			_ = resp.Body.Close()
			return false
		} else {
			opened = true
			ended, stopped, err := readRunEvents(resp.Body, true, func(id string, run *WorkflowRun) bool {
				failures = 0
				lastID = id
				return yield(run, nil)
			})
			_ = resp.Body.Close()
			switch {
			case stopped || ended:
				return true
			case ctx.Err() != nil:
				yield(nil, ctx.Err())
				return true
			case failures >= transientTries:
				yield(nil, fmt.Errorf("client: watch run %s: the stream ended before the run: %w", runID, cmpErr(err)))
				return true
			}
			failures++
		}
		if !sleep(ctx, wait) {
			yield(nil, ctx.Err())
			return true
		}
	}
}

func cmpErr(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readRunEvents reads a stream of runs, calling each for each run event, until the stream
// ends, each answers false (stopped), or, untilEnded, the run event read is of an ended
// run (ended).
func readRunEvents(body io.Reader, untilEnded bool, each func(id string, run *WorkflowRun) bool) (ended, stopped bool, err error) {
	r := bufio.NewScanner(body)
	r.Buffer(make([]byte, 0, 64<<10), maxEventLine)
	var id, name string
	var data bytes.Buffer
	for r.Scan() {
		line := r.Bytes()
		if len(line) == 0 {
			// An event ends: a run's state, or something this client does not know.
			if data.Len() > 0 && (name == "" || name == "run") {
				var run WorkflowRun
				if err := json.Unmarshal(data.Bytes(), &run); err != nil {
					return false, false, fmt.Errorf("client: a run's stream sent an event that is no run: %w", err)
				}
				if !each(id, &run) {
					return false, true, nil
				}
				if untilEnded && run.Ended() {
					return true, false, nil
				}
			}
			name = ""
			data.Reset()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "": // a comment: the keep-alive
		case "id":
			id = string(value)
		case "event":
			name = string(value)
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(value)
		}
	}
	if err := r.Err(); err != nil {
		return false, false, err
	}
	return false, false, errors.New("the stream ended")
}

// RunWatchQuery selects the runs WatchWorkflowRuns follows; empty lists select all.
type RunWatchQuery struct {
	Workflows []string // names, `<team>/<name>` or ids
	Statuses  []string // see the Status constants
}

// WatchWorkflowRuns follows a team's runs (watchWorkflowRuns, Server-Sent Events): it
// yields each run of the team that changes, as the search answers it (without its task
// runs), among those q selects, as long as the stream lasts. It yields nothing for the
// runs as they are when it opens: read them with WorkflowRuns once it is open. The stream
// has no end of its own: when it is cut (the server shutting down, the connection lost)
// or ctx ends, the error is yielded and the sequence ends; changes made before it is
// opened again are not sent, so read the search again then.
func (c *Client) WatchWorkflowRuns(ctx context.Context, team string, q RunWatchQuery) iter.Seq2[*WorkflowRun, error] {
	return func(yield func(*WorkflowRun, error) bool) {
		resp, err := c.do(ctx, request{method: http.MethodGet, path: p("team", team, "workflowrun", "watch"),
			query: newQuery().list("workflows", q.Workflows).list("statuses", q.Statuses).values(), accept: "text/event-stream"})
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		_, stopped, err := readRunEvents(resp.Body, false, func(_ string, run *WorkflowRun) bool { return yield(run, nil) })
		if stopped {
			return
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		yield(nil, fmt.Errorf("client: watch the runs of team %s: %w", team, cmpErr(err)))
	}
}
