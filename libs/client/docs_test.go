package client_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/client/internal/snippets"
)

// TestDocsSnippets: each Go snippet of docs/sdk.md is the body of an Example function of
// example_test.go, and each Example is in the docs, so every snippet compiles.
func TestDocsSnippets(t *testing.T) {
	t.Parallel()
	snippets.Check(t, "../../docs/sdk.md", "example_test.go")
}
