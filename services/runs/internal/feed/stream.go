package feed

import (
	"context"
	"fmt"
	"io"
	"time"
)

// KeepAlive is how often a stream with nothing to send sends a comment, so that proxies
// and clients see the connection is alive.
const KeepAlive = 15 * time.Second

// Event names of the streams.
const (
	// EventRun carries a run's state (WorkflowRun).
	EventRun = "run"
)

// WriteEvent writes one Server-Sent Event: its id, its name and its data on one line.
func WriteEvent(w io.Writer, id, name string, data []byte) error {
	buf := make([]byte, 0, len(data)+len(id)+len(name)+24)
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, "\nevent: "...)
	buf = append(buf, name...)
	buf = append(buf, "\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, err := w.Write(buf)
	return err
}

// writeKeepAlive writes a comment line, which clients ignore.
func writeKeepAlive(w io.Writer) error {
	_, err := io.WriteString(w, ": keep-alive\n\n")
	return err
}

// Serve writes first, then each new state w is given, to out as Server-Sent Events,
// and a comment every keepAlive while nothing changes. It returns nil after the run's
// final state (the stream ends properly), and an error when the stream is cut short: ctx
// ended (the client left), the watch ended (the service shutting down, the run gone) or a
// write failed. A zero keepAlive means KeepAlive.
func Serve(ctx context.Context, out io.Writer, first State, w *Watcher, keepAlive time.Duration) error {
	if keepAlive <= 0 {
		keepAlive = KeepAlive
	}
	if err := WriteEvent(out, first.ID, EventRun, first.Data); err != nil {
		return err
	}
	if first.Ended {
		return nil
	}
	last := first.ID
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.Done():
			// A state read before the end still goes out.
			if st, ok := w.Next(); ok && st.ID != last {
				if err := WriteEvent(out, st.ID, EventRun, st.Data); err != nil {
					return err
				}
				if st.Ended {
					return nil
				}
			}
			if err := w.Err(); err != nil {
				return err
			}
			return fmt.Errorf("feed: the watch ended")
		case <-tick.C:
			if err := writeKeepAlive(out); err != nil {
				return err
			}
		case <-w.Ready():
			st, ok := w.Next()
			if !ok || st.ID == last {
				continue
			}
			if err := WriteEvent(out, st.ID, EventRun, st.Data); err != nil {
				return err
			}
			last = st.ID
			if st.Ended {
				return nil
			}
			tick.Reset(keepAlive)
		}
	}
}

// ServeTeam writes the summaries w is given to out as Server-Sent Events, one per run
// changed, and a comment every keepAlive while nothing changes, until ctx ends (the
// client left) or the watch ends (the service shutting down): a team's stream has no end
// of its own, so it is always cut short, with the error that cut it. A zero keepAlive
// means KeepAlive.
func ServeTeam(ctx context.Context, out io.Writer, w *TeamWatcher, keepAlive time.Duration) error {
	if keepAlive <= 0 {
		keepAlive = KeepAlive
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.Done():
			if err := w.Err(); err != nil {
				return err
			}
			return fmt.Errorf("feed: the watch ended")
		case <-tick.C:
			if err := writeKeepAlive(out); err != nil {
				return err
			}
		case <-w.Ready():
			for _, s := range w.Next() {
				if err := WriteEvent(out, s.ID, EventRun, s.Data); err != nil {
					return err
				}
			}
			tick.Reset(keepAlive)
		}
	}
}
