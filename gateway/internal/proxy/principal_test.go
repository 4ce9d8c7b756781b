package proxy

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

func TestPrincipalCache(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("a-service-key-for-proxy-tests"))
	require.NoError(t, err)
	cache := newPrincipalCache(signer)
	tests := []struct {
		name string
		p    auth.Principal
	}{
		{"admin", auth.Principal{Type: "global", ID: "bootstrap", Roles: []string{"admin"}}},
		{"same admin again", auth.Principal{Type: "global", ID: "bootstrap", Roles: []string{"admin"}}},
		{"other roles", auth.Principal{Type: "global", ID: "bootstrap", Roles: []string{"operator"}}},
		{"roles as permissions", auth.Principal{Type: "global", ID: "bootstrap", Permissions: []string{"admin"}}},
		{"fields shifted", auth.Principal{Type: "globalb", ID: "ootstrap", Roles: []string{"admin"}}},
		{"token", auth.Principal{Type: "workflow", ID: "infra/build", TokenID: "t1", Permissions: []string{"workflow/read"}}},
		{"workflow token's workflow", auth.Principal{Type: "workflow", ID: "infra/build", Team: "infra", Workflow: "build", TokenID: "t1", Permissions: []string{"workflow/read"}}},
		{"team token", auth.Principal{Type: "team", ID: "infra", Team: "infra", TokenID: "t2", Permissions: []string{"**/read"}}},
		{"team token, other team", auth.Principal{Type: "team", ID: "infra", Team: "ops", TokenID: "t2", Permissions: []string{"**/read"}}},
		{"team token, made by a person", auth.Principal{Type: "team", ID: "infra", Team: "ops", TokenID: "t2", Permissions: []string{"**/read"}, Person: "u1"}},
		{"team token, made by another person", auth.Principal{Type: "team", ID: "infra", Team: "ops", TokenID: "t2", Permissions: []string{"**/read"}, Person: "u2"}},
		{"user", auth.Principal{Type: "user", ID: "u1", Teams: map[string]string{"infra": "reader", "ops": "owner"}}},
		{"user's role changed", auth.Principal{Type: "user", ID: "u1", Teams: map[string]string{"infra": "owner", "ops": "owner"}}},
		{"roles swapped between teams", auth.Principal{Type: "user", ID: "u1", Teams: map[string]string{"infra": "owner", "ops": "reader"}}},
		{"user left a team", auth.Principal{Type: "user", ID: "u1", Teams: map[string]string{"ops": "owner"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := signer.Decode(setHeaders(t, cache, &tt.p))
			require.NoError(t, err)
			assert.Equal(t, tt.p, got)
		})
	}

	// A cached entry does not share the caller's slices.
	p := auth.Principal{Type: "user", ID: "u1", Roles: []string{"admin"}}
	setHeaders(t, cache, &p)
	p.Roles[0] = "reader"
	got, err := signer.Decode(setHeaders(t, cache, &p))
	require.NoError(t, err)
	assert.Equal(t, []string{"reader"}, got.Roles)

	// Nor the caller's map: a role changed in place is a different principal.
	u := auth.Principal{Type: "user", ID: "u2", Teams: map[string]string{"infra": "owner"}}
	setHeaders(t, cache, &u)
	u.Teams["infra"] = "reader"
	got, err = signer.Decode(setHeaders(t, cache, &u))
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"infra": "reader"}, got.Teams)
}

func TestPrincipalCacheIsBounded(t *testing.T) {
	t.Parallel()
	signer, err := auth.NewSigner([]byte("a-service-key-for-proxy-tests"))
	require.NoError(t, err)
	cache := newPrincipalCache(signer)
	for i := range maxEncodedPrincipals + 10 {
		setHeaders(t, cache, &auth.Principal{Type: "user", ID: string(rune('a' + i%26)), Name: string(rune(i))})
	}
	assert.LessOrEqual(t, len(cache.entries), maxEncodedPrincipals)
}

// setHeaders returns the principal header and signature the cache writes for p.
func setHeaders(t *testing.T, cache *principalCache, p *auth.Principal) (header, signature string) {
	t.Helper()
	got := map[string]string{}
	require.NoError(t, cache.setHeaders(p, func(k, v string) { got[k] = v }))
	require.Len(t, got, 2)
	return got[auth.HeaderPrincipal], got[auth.HeaderSignature]
}

// Every field of a principal tells two principals apart: one the cache forgot would sign
// one principal's headers for another (a field added to auth.Principal must be added to
// samePrincipal and hash).
func TestSamePrincipalComparesEveryField(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeOf(auth.Principal{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		t.Run(f.Name, func(t *testing.T) {
			t.Parallel()
			var a, b auth.Principal
			v := reflect.ValueOf(&b).Elem().Field(i)
			switch f.Type.Kind() {
			case reflect.String:
				v.SetString("x")
			case reflect.Slice:
				v.Set(reflect.ValueOf([]string{"x"}))
			case reflect.Map:
				v.Set(reflect.ValueOf(map[string]string{"x": "y"}))
			default:
				t.Fatalf("field %s of kind %s: teach this test and samePrincipal about it", f.Name, f.Type.Kind())
			}
			assert.False(t, samePrincipal(&a, &b), "%s is not compared", f.Name)
		})
	}
}
