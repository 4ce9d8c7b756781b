package mongostore

import (
	"container/list"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Bodies are stored as zstd-compressed JSON. JSON keeps what clients sent exactly (BSON
// would turn unknown members' numbers and key order into its own); compression matters
// because FerretDB's cost grows with document size (~50–100 µs per KB read or written):
// a 500-task workflow is ~150 KB of JSON and ~15 KB compressed.
var (
	// The fastest level: it compresses these documents about as well (a 10,000-entry
	// catalog: 30 KB against 29 KB) in half the time.
	encoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	decoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
)

// pack encodes v as compressed JSON.
func pack(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return encoder.EncodeAll(raw, make([]byte, 0, len(raw)/4)), nil
}

// unpack decodes compressed JSON into v.
func unpack(b []byte, v any) error {
	raw, err := decoder.DecodeAll(b, nil)
	if err != nil {
		return fmt.Errorf("decompress: %w", err)
	}
	return json.Unmarshal(raw, v)
}

// lru is a small least-recently-used cache, bounded by entries and, with a size function,
// by bytes; safe for concurrent use. Most of what it caches never changes under its key;
// what does (catalogs) is checked against the store or put in order (putUnless).
type lru[V any] struct {
	mu       sync.Mutex
	max      int
	maxBytes int
	size     func(V) int
	bytes    int
	order    *list.List
	items    map[string]*list.Element
}

type lruItem[V any] struct {
	key  string
	val  V
	size int
}

func newLRU[V any](max int) *lru[V] {
	return &lru[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

// newSizedLRU bounds the cache by the total size of its values as well.
func newSizedLRU[V any](max, maxBytes int, size func(V) int) *lru[V] {
	c := newLRU[V](max)
	c.maxBytes, c.size = maxBytes, size
	return c
}

func (c *lru[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruItem[V]).val, true
	}
	var zero V
	return zero, false
}

func (c *lru[V]) put(key string, v V) {
	c.putUnless(key, v, nil)
}

// putUnless puts v under key unless keep says the value held there already stays.
func (c *lru[V]) putUnless(key string, v V, keep func(held V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok && keep != nil && keep(el.Value.(*lruItem[V]).val) {
		c.order.MoveToFront(el)
		return
	}
	size := 0
	if c.size != nil {
		size = c.size(v)
	}
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem[V])
		c.bytes += size - it.size
		it.val, it.size = v, size
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: v, size: size})
		c.bytes += size
	}
	for c.order.Len() > 1 && (c.order.Len() > c.max || (c.maxBytes > 0 && c.bytes > c.maxBytes)) {
		c.drop(c.order.Back())
	}
}

func (c *lru[V]) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.drop(el)
	}
}

// removePrefix removes every key starting with prefix.
func (c *lru[V]) removePrefix(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, el := range c.items {
		if strings.HasPrefix(key, prefix) {
			c.drop(el)
		}
	}
}

func (c *lru[V]) drop(el *list.Element) {
	it := el.Value.(*lruItem[V])
	c.order.Remove(el)
	delete(c.items, it.key)
	c.bytes -= it.size
}
