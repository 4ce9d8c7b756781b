package httpx

import (
	"context"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
)

// StreamWriteIdle bounds each write of a streamed answer: a client that takes nothing for
// that long is taken as gone. The answer as a whole has no time limit.
const StreamWriteIdle = time.Minute

// Stream answers the request in c with a body that write produces as it goes, for answers
// that last as long as something else does (a followed log). Each Write reaches the client
// at once, as one chunk (HTTP/1.0 clients get the bytes as they are, ended by the close).
//
// The answer is written on the hijacked connection, after the app's middleware is done with
// the request: nothing in between holds the body back (the tracing middleware reads a body
// whole to measure it), and the server's write timeout, meant for whole answers, does not
// cut it. Its status and headers are c's response's as the middleware leaves them.
//
// write's context ends when the client closes the connection or the server begins shutting
// down; the connection then closes at once. When write returns nil the body ends properly;
// when it returns an error the body is cut short, so that a client can tell an answer that
// stopped from one that is complete. The connection closes when write returns. A HEAD
// request gets the head alone; write is not called.
func Stream(c *fiber.Ctx, write func(ctx context.Context, w io.Writer) error) {
	fctx := c.Context()
	// Closed when the server begins shutting down; the hijacked connection is no longer
	// the server's to wait for.
	shutdown := fctx.Done()
	chunked := fctx.Request.Header.IsHTTP11()
	head := fctx.IsHead() // the head alone, without the body's end
	// The tracing middleware ends its context when the handler returns; the stream goes on
	// with the context's values.
	base := context.WithoutCancel(c.UserContext())
	fctx.HijackSetNoResponse(true)
	fctx.Hijack(func(conn net.Conn) {
		ctx, cancel := context.WithCancel(base)
		defer cancel()
		raw := conn
		if u, ok := conn.(interface{ UnsafeConn() net.Conn }); ok {
			raw = u.UnsafeConn() // the hijacked connection's Close leaves it open
		}
		stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
		defer stop()
		// The client sends nothing more: a read ends when it closes the connection.
		gone := make(chan struct{})
		go func() {
			defer close(gone)
			_, _ = io.Copy(io.Discard, conn)
			cancel()
		}()
		go func() {
			select {
			case <-shutdown:
				cancel()
			case <-gone:
			}
		}()
		defer func() {
			_ = raw.Close()
			<-gone // the reader uses the server's buffers, which are released after this
		}()

		h := &fctx.Response.Header
		if chunked {
			h.SetContentLength(-1)
		} else {
			h.SetContentLength(-2)
			h.Del(fiber.HeaderTransferEncoding)
		}
		h.SetConnectionClose()
		w := &streamWriter{conn: conn, chunked: chunked}
		if err := w.send(h.Header()); err != nil || head {
			return
		}
		if err := write(ctx, w); err != nil || !chunked {
			return
		}
		_ = w.send([]byte("0\r\n\r\n"))
	})
}

// streamWriter writes each Write to the connection at once, as a chunk when chunked.
type streamWriter struct {
	conn    net.Conn
	chunked bool
	buf     []byte
}

func (w *streamWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // an empty chunk would end the body
	}
	if !w.chunked {
		if err := w.send(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.buf = strconv.AppendInt(w.buf[:0], int64(len(p)), 16)
	w.buf = append(w.buf, '\r', '\n')
	w.buf = append(w.buf, p...)
	w.buf = append(w.buf, '\r', '\n')
	if err := w.send(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *streamWriter) send(b []byte) error {
	if err := w.conn.SetWriteDeadline(time.Now().Add(StreamWriteIdle)); err != nil {
		return err
	}
	_, err := w.conn.Write(b)
	return err
}
