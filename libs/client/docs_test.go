package client_test

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

// TestDocsSnippets: each Go snippet of docs/sdk.md is the body of an Example function of
// example_test.go, and each Example is in the docs, so every snippet compiles.
func TestDocsSnippets(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/sdk.md")
	require.NoError(t, err)
	var snippets []string
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(doc), -1) {
		snippets = append(snippets, m[1])
	}
	require.NotEmpty(t, snippets)

	src, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "example_test.go", src, 0)
	require.NoError(t, err)
	examples := map[string]string{}
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
		examples[fn.Name.Name] = strings.Join(lines, "")
	}

	used := map[string]bool{}
	for _, s := range snippets {
		found := false
		for name, body := range examples {
			if body == s {
				found, used[name] = true, true
			}
		}
		assert.True(t, found, "docs/sdk.md has a snippet that is no Example of example_test.go:\n%s", s)
	}
	for name := range examples {
		assert.True(t, used[name], "%s is not in docs/sdk.md", name)
	}
}
