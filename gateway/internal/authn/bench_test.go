package authn

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkIdentityAuthenticate measures Authenticate alone: "cached" is a hit (hashing
// the credential and a map lookup), "uncached" asks a fake identity on loopback every time.
func BenchmarkIdentityAuthenticate(b *testing.B) {
	signer := testSigner(b)
	id := newFakeIdentity(b, signer)
	id.set("btt_bench", answer{status: 200, principal: teamPrincipal})
	for _, tc := range []struct {
		name string
		ttl  time.Duration
	}{{"cached", time.Hour}, {"uncached", -1}} {
		b.Run(tc.name, func(b *testing.B) {
			a := newIdentity(b, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, TTL: tc.ttl})
			ctx := context.Background()
			if _, err := a.Authenticate(ctx, "btt_bench"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(ctx, "btt_bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("cached-parallel", func(b *testing.B) {
		a := newIdentity(b, IdentityConfig{Resolver: resolverFor(id.url), Signer: signer, TTL: time.Hour})
		tokens := make([]string, 64)
		for i := range tokens {
			tokens[i] = fmt.Sprintf("btt_bench_%d", i)
			id.set(tokens[i], answer{status: 200, principal: teamPrincipal})
			if _, err := a.Authenticate(context.Background(), tokens[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, err := a.Authenticate(context.Background(), tokens[i%len(tokens)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
