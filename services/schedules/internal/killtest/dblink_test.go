package killtest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
)

// dbLink is one replica slot's way to the database: a TCP proxy in front of it that reads
// the wire protocol's messages whole, so that it can kill the replica as one of its writes
// goes by (cluster.take, cluster.spring): before the database gets the write, or once the
// database has answered it and before the replica hears the answer.
type dbLink struct {
	c        *cluster
	slot     int
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup
}

func newDBLink(c *cluster, slot int, upstream string) (*dbLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &dbLink{c: c, slot: slot, ln: ln, upstream: upstream}
	l.wg.Go(l.serve)
	return l, nil
}

func (l *dbLink) addr() string { return l.ln.Addr().String() }

// close stops taking connections; those open end with the replica that made them.
func (l *dbLink) close() {
	_ = l.ln.Close()
	l.wg.Wait()
}

func (l *dbLink) serve() {
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			return
		}
		// The connection is the replica's that runs in the slot now: one that died cannot
		// connect any more.
		p := l.c.current(l.slot, 0)
		l.wg.Go(func() { l.relay(conn, p) })
	}
}

// relay carries one connection of replica p. The driver never pipelines requests on a
// connection, so the first message back after a write is its answer.
func (l *dbLink) relay(client net.Conn, p *proc) {
	defer client.Close()
	server, err := net.Dial("tcp", l.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	// answered is a write whose answer kills the replica, passed from one direction to
	// the other.
	answered := make(chan phase, 1)
	var back sync.WaitGroup
	back.Go(func() {
		defer client.Close()
		sr := bufio.NewReader(server)
		for {
			msg, err := readMessage(sr)
			if err != nil {
				return
			}
			select {
			case <-answered:
				l.c.spring(p) // the database made the write; the replica never hears of it
				return
			default:
			}
			if _, err := client.Write(msg); err != nil {
				return
			}
		}
	})
	defer func() {
		_ = server.Close()
		back.Wait()
		select {
		case <-answered:
			l.c.unsprung() // the connection ended before the answer came
		default:
		}
	}()
	cr := bufio.NewReader(client)
	for {
		msg, err := readMessage(cr)
		if err != nil {
			return
		}
		ph := writePhase(msg)
		l.c.seen(ph)
		if ph != phaseNone && l.c.take(p, ph, false) {
			l.c.spring(p) // killed as it sent the write: the database never gets it
			return
		}
		if ph != phaseNone && l.c.take(p, ph, true) {
			answered <- ph
		}
		if _, err := server.Write(msg); err != nil {
			return
		}
	}
}

// Markers of the schedules store's writes in a wire message: the command, and in a BSON
// document an element's type byte, then its name.
var (
	updateCommand = []byte("\x02update\x00")  // ClaimDue and Keep are update commands
	setOperator   = []byte("\x03$set\x00")    // only the claim updates fields; Keep replaces
	pendingFires  = []byte("\x04pending\x00") // an array, present only when fires are owed
)

// writePhase says which of a replica's writes msg is: the claim of schedules due, a
// schedule stored with fires pending (before they are submitted), or a schedule stored
// with none (once its fires are made); phaseNone for anything else.
func writePhase(msg []byte) phase {
	switch {
	case !bytes.Contains(msg, updateCommand):
		return phaseNone
	case bytes.Contains(msg, setOperator):
		return phaseClaim
	case bytes.Contains(msg, pendingFires):
		return phasePlan
	}
	return phaseStore
}

// maxMessage bounds a wire message, well above MongoDB's 48 MB.
const maxMessage = 64 << 20

// readMessage reads one whole wire message: its length comes first.
func readMessage(r *bufio.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(size[:])))
	if n < 16 || n > maxMessage {
		return nil, fmt.Errorf("a wire message of %d bytes", n)
	}
	msg := make([]byte, n)
	copy(msg, size[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}
