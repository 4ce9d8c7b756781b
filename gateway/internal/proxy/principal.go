package proxy

import (
	"hash/maphash"
	"maps"
	"slices"
	"sync"

	"github.com/baton-flow/baton/libs/auth"
)

// maxEncodedPrincipals bounds the cache of encoded principals; it is cleared when full.
const maxEncodedPrincipals = 4096

// principalCache keeps the headers auth.Signer.SetHeaders writes for the principals seen
// lately: encoding and signing (JSON, base64, HMAC) cost more than the rest of the gateway's
// own work on a request, and a client sends many requests as the same principal. This holds
// while the signature covers the principal alone; should libs/auth sign a timestamp or
// nonce, the cache must go.
type principalCache struct {
	signer  *auth.Signer
	seed    maphash.Seed
	mu      sync.RWMutex
	entries map[uint64]*encodedPrincipal
}

type encodedPrincipal struct {
	principal auth.Principal
	headers   [][2]string // name, value
}

func newPrincipalCache(signer *auth.Signer) *principalCache {
	return &principalCache{signer: signer, seed: maphash.MakeSeed(), entries: map[uint64]*encodedPrincipal{}}
}

// setHeaders writes the headers carrying p through set.
func (c *principalCache) setHeaders(p *auth.Principal, set func(name, value string)) error {
	key := c.hash(p)
	c.mu.RLock()
	e := c.entries[key]
	c.mu.RUnlock()
	if e == nil || !samePrincipal(&e.principal, p) {
		e = &encodedPrincipal{principal: clonePrincipal(p)}
		err := c.signer.SetHeaders(*p, func(name, value string) {
			e.headers = append(e.headers, [2]string{name, value})
		})
		if err != nil {
			return err
		}
		c.mu.Lock()
		if len(c.entries) >= maxEncodedPrincipals {
			clear(c.entries)
		}
		c.entries[key] = e
		c.mu.Unlock()
	}
	for _, h := range e.headers {
		set(h[0], h[1])
	}
	return nil
}

// hash covers every field of the principal: two principals that differ anywhere (a
// user's role in one team, a token's team) must never share signed headers.
func (c *principalCache) hash(p *auth.Principal) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	// A separator after each field keeps ("ab","c") and ("a","bc") apart.
	for _, s := range [...]string{p.Type, p.ID, p.Name, p.Email, p.TokenID, p.Team, p.Workflow, p.Person} {
		h.WriteString(s)
		h.WriteByte(0)
	}
	for _, s := range p.Roles {
		h.WriteString(s)
		h.WriteByte(0)
	}
	h.WriteByte(1)
	for _, s := range p.Permissions {
		h.WriteString(s)
		h.WriteByte(0)
	}
	// Map order varies, so each team and role is hashed alone and the hashes summed.
	var teams uint64
	for team, role := range p.Teams {
		var e maphash.Hash
		e.SetSeed(c.seed)
		e.WriteString(team)
		e.WriteByte(0)
		e.WriteString(role)
		teams += e.Sum64()
	}
	h.WriteByte(2)
	var buf [8]byte
	for i := range buf {
		buf[i] = byte(teams >> (8 * i))
	}
	h.Write(buf[:])
	return h.Sum64()
}

func samePrincipal(a, b *auth.Principal) bool {
	return a.Type == b.Type && a.ID == b.ID && a.Name == b.Name && a.Email == b.Email &&
		a.TokenID == b.TokenID && a.Team == b.Team && a.Workflow == b.Workflow && a.Person == b.Person &&
		slices.Equal(a.Roles, b.Roles) && slices.Equal(a.Permissions, b.Permissions) &&
		maps.Equal(a.Teams, b.Teams)
}

// clonePrincipal copies p's slices and map, which the caller may reuse.
func clonePrincipal(p *auth.Principal) auth.Principal {
	c := *p
	c.Roles = slices.Clone(p.Roles)
	c.Permissions = slices.Clone(p.Permissions)
	c.Teams = maps.Clone(p.Teams)
	return c
}
