package domain

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/baton-flow/baton/libs/page"
)

// Entry is the head of one workflow (or template) in its catalog: which version is the
// latest, and what queries filter and sort on.
type Entry struct {
	Name   string
	Latest int
	// Revs holds the revision of each version that is not 1. A replaced version gets a new
	// revision: revisions are immutable, so readers may cache them by (version, revision).
	Revs         map[int]int
	Status       Status
	Labels       map[string]string
	CreationDate time.Time
}

// RevOf returns the revision holding version v's content.
func (e Entry) RevOf(v int) int {
	if r, ok := e.Revs[v]; ok {
		return r
	}
	return 1
}

// WithRev returns e with version v held by revision rev.
func (e Entry) WithRev(v, rev int) Entry {
	e.Revs = maps.Clone(e.Revs)
	if rev == 1 {
		delete(e.Revs, v)
	} else {
		if e.Revs == nil {
			e.Revs = map[int]int{}
		}
		e.Revs[v] = rev
	}
	return e
}

// Catalog is the set of heads of one team's workflows (or of all templates) after its Seq-th
// change. A catalog once published is shared read-only; Next starts the following one.
type Catalog struct {
	Seq     int64
	entries map[string]Entry
	// sorted holds the entries oldest first (creation date, then name), kept in order by
	// Put and Remove so that neither a change nor a query sorts 10,000 heads.
	sorted []Entry
	// changed names the heads Put or Removed since Next made this catalog, for a store
	// that writes only what changed.
	changed map[string]bool
}

func compareEntries(a, b Entry) int {
	return cmp.Or(a.CreationDate.Compare(b.CreationDate), cmp.Compare(a.Name, b.Name))
}

// NewCatalog returns the catalog at seq holding entries, which it keeps.
func NewCatalog(seq int64, entries []Entry) *Catalog {
	if !slices.IsSortedFunc(entries, compareEntries) {
		slices.SortFunc(entries, compareEntries)
	}
	m := make(map[string]Entry, len(entries))
	for _, e := range entries {
		m[e.Name] = e
	}
	return &Catalog{Seq: seq, entries: m, sorted: entries}
}

// Entry returns the head of the workflow called name.
func (c *Catalog) Entry(name string) (Entry, bool) {
	e, ok := c.entries[name]
	return e, ok
}

// Len is the number of workflows.
func (c *Catalog) Len() int { return len(c.entries) }

// Next returns a changeable copy of c numbered Seq+1.
func (c *Catalog) Next() *Catalog {
	return &Catalog{Seq: c.Seq + 1, entries: maps.Clone(c.entries), sorted: slices.Clone(c.sorted), changed: map[string]bool{}}
}

// Put adds or replaces the head of e.Name. Only for catalogs from Next, before publishing.
func (c *Catalog) Put(e Entry) {
	if c.entries == nil {
		c.entries = map[string]Entry{}
	}
	if old, ok := c.entries[e.Name]; ok {
		c.unsort(old)
	}
	c.entries[e.Name] = e
	c.touch(e.Name)
	i, _ := slices.BinarySearchFunc(c.sorted, e, compareEntries)
	c.sorted = slices.Insert(c.sorted, i, e)
}

// Remove drops the head of name. Only for catalogs from Next, before publishing.
func (c *Catalog) Remove(name string) {
	if old, ok := c.entries[name]; ok {
		c.unsort(old)
		delete(c.entries, name)
		c.touch(name)
	}
}

func (c *Catalog) touch(name string) {
	if c.changed == nil {
		c.changed = map[string]bool{}
	}
	c.changed[name] = true
}

// Changed returns the names whose heads were Put or Removed since Next made c, in no
// order: with Entry, what a store writes of a change.
func (c *Catalog) Changed() []string {
	return slices.Collect(maps.Keys(c.changed))
}

func (c *Catalog) unsort(e Entry) {
	if i, found := slices.BinarySearchFunc(c.sorted, e, compareEntries); found {
		c.sorted = slices.Delete(c.sorted, i, i+1)
	}
}

// Entries returns every head, oldest first (creation date, then name). Do not change it.
func (c *Catalog) Entries() []Entry { return c.sorted }

// Filter selects workflows in a query; empty fields select everything. Labels must all
// match; unknown statuses or names simply match nothing.
type Filter struct {
	Labels   map[string]string
	Statuses []string
	Names    []string
}

func (f Filter) match(e Entry) bool {
	if len(f.Statuses) > 0 && !slices.Contains(f.Statuses, string(e.Status)) {
		return false
	}
	if len(f.Names) > 0 && !slices.Contains(f.Names, e.Name) {
		return false
	}
	for k, v := range f.Labels {
		if got, ok := e.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Find returns one page of the heads matching f in creation order (p.Desc reverses it),
// and how many match in all.
func (c *Catalog) Find(f Filter, p page.Request) ([]Entry, int64) {
	all := c.Entries()
	var total int64
	from, to := p.Offset(), p.Offset()+int64(p.Size)
	out := make([]Entry, 0, min(p.Size, len(all)))
	for k := range all {
		i := k
		if p.Desc {
			i = len(all) - 1 - k
		}
		if !f.match(all[i]) {
			continue
		}
		if total >= from && total < to {
			out = append(out, all[i])
		}
		total++
	}
	return out, total
}
