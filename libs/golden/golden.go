// Package golden pins the JSON wire form of types to fixtures, for tests: the fixture
// testdata/<name>.json of the package under test holds a value's encoding, indented by two
// spaces, and a test fails when the encoding no longer matches it. `go test -update`
// rewrites the fixtures from the values instead.
//
//	func TestGolden(t *testing.T) {
//		t.Parallel()
//		golden.Check(t, cases())
//	}
//
//	func TestNoStaleFixtures(t *testing.T) {
//		t.Parallel()
//		golden.NoStale(t, golden.Names(cases()))
//	}
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// update is registered here, once, so that every test binary that pins fixtures takes it.
var update = flag.Bool("update", false, "rewrite the golden fixtures under testdata")

// Case is one value pinned by the fixture testdata/<Name>.json.
type Case struct {
	Name  string
	Value any
}

// Names lists the cases' names, for NoStale.
func Names(cases []Case) []string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.Name
	}
	return names
}

// Check runs a parallel subtest a case: Value's encoding matches its fixture (Match), it
// decodes into a new value of Value's type that equals Value, and that value encodes to the
// same bytes again.
func Check(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			raw, err := json.Marshal(c.Value)
			require.NoError(t, err)
			Match(t, c.Name, raw)

			// The encoding, not the fixture, is decoded: it is the fixture when they match,
			// and raw members (json.RawMessage) read from it are compact, as Value has them.
			got := reflect.New(reflect.TypeOf(c.Value))
			require.NoError(t, json.Unmarshal(raw, got.Interface()))
			assert.Equal(t, c.Value, got.Elem().Interface(), "the value does not survive an encode and decode")
			again, err := json.Marshal(got.Elem().Interface())
			require.NoError(t, err)
			assert.Equal(t, string(raw), string(again), "the value read and written again is not the same bytes")
		})
	}
}

// Match compares raw, a JSON encoding, with the fixture testdata/<name>.json, which holds it
// indented by two spaces and followed by a newline, and returns the fixture. Under -update
// it first writes the fixture from raw.
func Match(t testing.TB, name string, raw []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name+".json")
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, raw, "", "  "))
	pretty.WriteByte('\n')

	if *update {
		require.NoError(t, os.WriteFile(path, pretty.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create the fixture")
	assert.Equal(t, string(want), pretty.String(), "wire form changed; if intended, run go test -update")
	return want
}

// NoStale fails for each fixture in testdata that names has no case for: a fixture without
// a case would pin nothing.
func NoStale(t testing.TB, names []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		assert.True(t, slices.Contains(names, name), "fixture %s has no golden case", f)
	}
}
