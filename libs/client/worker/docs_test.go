package worker_test

import (
	"testing"

	"github.com/baton-flow/baton/libs/client/internal/snippets"
)

// TestDocsSnippets: the Go snippet of docs/workers.md is the body of an Example function
// of example_test.go, so it compiles.
func TestDocsSnippets(t *testing.T) {
	t.Parallel()
	snippets.Check(t, "../../../docs/workers.md", "example_test.go")
}
