package runs_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run search without limit answers up to 1000 runs, as every other search does.
func TestQueryLimitDefaultsToAThousand(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.defs.put("infra", chain("quick", prop("p", "x", "y")))
	for range 12 {
		f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/quick/submit?start=true", nil)
	}
	page := f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query", nil).body
	assert.Len(t, page["content"], 12)
	assert.EqualValues(t, 12, page["totalElements"])
	page = f.must(t, http.StatusOK, reader, http.MethodGet, infra+"/workflowrun/query?limit=5&page=2", nil).body
	assert.Len(t, page["content"], 2)
	f.must(t, http.StatusBadRequest, reader, http.MethodGet, infra+"/workflowrun/query?limit=1001", nil)
}
