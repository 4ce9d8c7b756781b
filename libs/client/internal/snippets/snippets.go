// Package snippets checks that the Go snippets of a document are the bodies of Example
// functions, and each Example is in the document, so that every snippet compiles.
package snippets

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Check fails t unless each ```go block of the document at doc is the body of an Example
// function of the Go file at examples, and each Example there is a block of doc.
func Check(t *testing.T, doc, examples string) {
	t.Helper()
	text, err := os.ReadFile(doc)
	require.NoError(t, err)
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(text), -1) {
		blocks = append(blocks, m[1])
	}
	require.NotEmpty(t, blocks)

	src, err := os.ReadFile(examples)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, examples, src, 0)
	require.NoError(t, err)
	bodies := map[string]string{}
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || !strings.HasPrefix(fn.Name.Name, "Example") {
			continue
		}
		body := string(src[fset.Position(fn.Body.Lbrace).Offset+2 : fset.Position(fn.Body.Rbrace).Offset])
		var lines []string
		for line := range strings.Lines(body) {
			lines = append(lines, strings.TrimPrefix(line, "\t"))
		}
		bodies[fn.Name.Name] = strings.Join(lines, "")
	}

	used := map[string]bool{}
	for _, b := range blocks {
		found := false
		for name, body := range bodies {
			if body == b {
				found, used[name] = true, true
			}
		}
		assert.True(t, found, "%s has a snippet that is no Example of %s:\n%s", doc, examples, b)
	}
	for name := range bodies {
		assert.True(t, used[name], "%s is not in %s", name, doc)
	}
}
