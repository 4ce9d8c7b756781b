package embedded

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// FerretDB v1 on SQLite executes update, findAndModify and delete as "query the matching
// documents, change them in Go, write them back by _id", with nothing re-checking the
// filter at write time. Concurrent writes therefore lose updates: 400 concurrent
// {$inc: {n: 1}} left n at 43, and 8 workers claiming 50 tasks with FindOneAndUpdate
// claimed 37 of them twice. Conditional updates (versions, claims) are not atomic.
//
// wireProxy fixes that for everything going through Mongo.URI: it sits in front of
// FerretDB, parses just enough of the wire protocol to recognise mutating commands, and
// lets only one of them be in flight at a time, across all connections. Reads still run
// concurrently. It also lets Close cut clients off at once instead of FerretDB's 3 s grace.
type wireProxy struct {
	ln       net.Listener
	upstream string
	ids      *idIndexer // nil: no indexing (tests of the relay alone)

	// writeMu is held from forwarding a mutating command until its reply has arrived.
	writeMu sync.Mutex

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Wire protocol constants (https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/).
const (
	opCompressed = 2012
	opMsg        = 2013

	msgHeaderLen   = 16
	maxMessageSize = 64 << 20 // well above MongoDB's 48 MB limit

	flagChecksumPresent = 1 << 0
	flagMoreToCome      = 1 << 1
)

// serializedCommands are the commands that run one at a time: every write, and DDL,
// which is rare enough that serialising it costs nothing.
var serializedCommands = map[string]bool{
	"insert": true, "update": true, "delete": true,
	"findAndModify": true, "findandmodify": true,
	"create": true, "createIndexes": true, "drop": true, "dropDatabase": true,
	"dropIndexes": true, "deleteIndexes": true, "renameCollection": true, "collMod": true,
}

func newWireProxy(ln net.Listener, upstream string, ids *idIndexer) *wireProxy {
	p := &wireProxy{ln: ln, upstream: upstream, ids: ids, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.serve()
	return p
}

func (p *wireProxy) serve() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed by close()
		}
		p.wg.Add(1)
		go p.handle(client)
	}
}

// close stops accepting, cuts every connection and waits for the handlers to finish.
func (p *wireProxy) close() {
	p.mu.Lock()
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// track registers connections so close can cut them; false if the proxy is closing.
func (p *wireProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *wireProxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		delete(p.conns, c)
	}
}

// handle relays one client connection. The driver never pipelines requests on a
// connection, so a strict request → reply(s) loop is enough.
func (p *wireProxy) handle(client net.Conn) {
	defer p.wg.Done()
	defer client.Close()
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(client, server) {
		return
	}
	defer p.untrack(client, server)

	cr, sr := bufio.NewReader(client), bufio.NewReader(server)
	for {
		req, err := readMessage(cr)
		if err != nil {
			return
		}
		serialize := mustSerialize(req)
		if serialize {
			p.writeMu.Lock()
		}
		var done func()
		if serialize {
			// Before the client hears back, so it never sees a collection without the index.
			done = func() { p.afterWrite(req) }
		}
		err = roundTrip(req, server, sr, client, done)
		if serialize {
			p.writeMu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// afterWrite keeps the _id lookup index (see idIndexer) on every collection a write may
// have created, and forgets dropped ones.
func (p *wireProxy) afterWrite(req []byte) {
	if p.ids == nil || opCode(req) != opMsg {
		return
	}
	cmd, err := parseCommand(req)
	if err != nil {
		return
	}
	switch cmd.name {
	case "insert", "update", "findAndModify", "findandmodify", "create", "createIndexes":
		p.ids.ensure(context.Background(), cmd.db, cmd.coll)
	case "drop":
		p.ids.forget(cmd.db, cmd.coll)
	case "dropDatabase":
		p.ids.forget(cmd.db, "")
	case "renameCollection":
		p.ids.reset()
	}
}

// roundTrip forwards req and relays its replies, calling done (if not nil) once the server
// has answered and before the client hears it. If the client has gone, it still reads the
// server's reply, so the lock is held until FerretDB has really finished the command.
func roundTrip(req []byte, server io.Writer, sr *bufio.Reader, client io.Writer, done func()) error {
	if _, err := server.Write(req); err != nil {
		return err
	}
	if moreToCome(req) {
		return nil // the client wants no reply (w:0)
	}
	var clientErr error
	for {
		reply, err := readMessage(sr)
		if err != nil {
			return err
		}
		if done != nil {
			done()
			done = nil
		}
		if clientErr == nil {
			_, clientErr = client.Write(reply)
		}
		// A reply flagged moreToCome is followed by another (exhaust cursors, streaming hello).
		if !moreToCome(reply) {
			return clientErr
		}
	}
}

// readMessage reads one whole wire message.
func readMessage(r *bufio.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, err
	}
	n := int(int32(binary.LittleEndian.Uint32(size[:])))
	if n < msgHeaderLen || n > maxMessageSize {
		return nil, fmt.Errorf("wire message of %d bytes", n)
	}
	msg := make([]byte, n)
	copy(msg, size[:])
	if _, err := io.ReadFull(r, msg[4:]); err != nil {
		return nil, err
	}
	return msg, nil
}

func opCode(msg []byte) int32 { return int32(binary.LittleEndian.Uint32(msg[12:16])) }

// msgFlags returns an OP_MSG's flag bits, or 0 for other messages and truncated ones.
func msgFlags(msg []byte) uint32 {
	if opCode(msg) != opMsg || len(msg) < msgHeaderLen+4 {
		return 0
	}
	return binary.LittleEndian.Uint32(msg[msgHeaderLen:])
}

// moreToCome reports an OP_MSG flagged moreToCome: a request that wants no reply (w:0),
// or a reply that another follows.
func moreToCome(msg []byte) bool { return msgFlags(msg)&flagMoreToCome != 0 }

// mustSerialize reports whether req is a command that must not overlap other writes.
// Messages it cannot read (compressed ones) are serialised to be safe.
func mustSerialize(req []byte) bool {
	switch opCode(req) {
	case opMsg:
		name, err := commandName(req)
		return err != nil || serializedCommands[name]
	case opCompressed:
		return true
	default:
		// OP_QUERY only carries the connection handshake nowadays.
		return false
	}
}

// command is what the proxy reads of a request: the command, the collection it names
// (the first element's value, when a string) and its database.
type command struct{ name, coll, db string }

// parseCommand reads an OP_MSG's body (kind 0) section.
func parseCommand(msg []byte) (command, error) {
	body, err := commandBody(msg)
	if err != nil {
		return command{}, err
	}
	raw := bson.Raw(body)
	first, err := raw.IndexErr(0)
	if err != nil {
		return command{}, fmt.Errorf("command document: %w", err)
	}
	cmd := command{name: first.Key()}
	cmd.coll, _ = first.Value().StringValueOK()
	cmd.db, _ = raw.Lookup("$db").StringValueOK()
	return cmd, nil
}

// commandName returns the first key of an OP_MSG's body (kind 0) section: the command.
func commandName(msg []byte) (string, error) {
	body, err := commandBody(msg)
	if err != nil {
		return "", err
	}
	key := body[5:]
	for i, b := range key {
		if b == 0 {
			return string(key[:i]), nil
		}
	}
	return "", errors.New("malformed OP_MSG")
}

// commandBody returns an OP_MSG's body (kind 0) section, a BSON document.
func commandBody(msg []byte) ([]byte, error) {
	end := len(msg)
	if msgFlags(msg)&flagChecksumPresent != 0 {
		end -= 4
	}
	pos := msgHeaderLen + 4
	for pos < end {
		kind := msg[pos]
		pos++
		if pos+4 > end {
			break
		}
		size := int(int32(binary.LittleEndian.Uint32(msg[pos:])))
		if size < 5 || pos+size > end {
			break
		}
		if kind == 0 {
			// A BSON document: int32 length, then elements (type byte, cstring key, value).
			doc := msg[pos : pos+size]
			if doc[4] == 0 {
				return nil, errors.New("empty command document")
			}
			return doc, nil
		}
		// Kind 1, a document sequence: int32 size covering identifier and documents.
		pos += size
	}
	return nil, errors.New("malformed OP_MSG")
}
