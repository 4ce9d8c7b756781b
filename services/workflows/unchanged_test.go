package workflows_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// described answers workflow body with its description set to d.
func described(body, d string) string {
	return strings.Replace(body, "{", `{"description":"`+d+`",`, 1)
}

// Saving a workflow as its latest version holds it already writes nothing and makes no
// version, through a PUT (versioned or replacing) and the canvas alike; any change does.
// A template too.
func TestSavingTheSameWorkflowMakesNoVersion(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, store string) {
		f := newFixture(t, fixtureOptions{store: store})
		body := described(formWorkflow("same", "s3cret"), "first")
		f.must(t, http.StatusCreated, editor, http.MethodPost, base, body)
		version := func() float64 {
			return f.must(t, http.StatusOK, reader, http.MethodGet, base+"/same", nil).body["version"].(float64)
		}

		// The password default comes back masked, as a client that read it sends it.
		again := described(formWorkflow("same", "********"), "first")
		got := f.must(t, http.StatusOK, editor, http.MethodPut, base, again)
		assert.Equal(t, float64(1), got.body["version"], "the same definition")
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"?replace=true", again)
		canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/same/compose", nil)
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"/same/compose", canvas.raw)
		assert.Equal(t, float64(1), version(), "saved three times unchanged")
		changelog := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/same/changelog", nil)
		assert.Contains(t, string(changelog.raw), `"version":1`)
		assert.NotContains(t, string(changelog.raw), `"version":2`)

		got = f.must(t, http.StatusOK, editor, http.MethodPut, base, described(formWorkflow("same", "********"), "second"))
		assert.Equal(t, float64(2), got.body["version"], "a change makes a version")
		got = f.must(t, http.StatusOK, editor, http.MethodPut, base, described(formWorkflow("same", "n3w"), "second"))
		assert.Equal(t, float64(3), got.body["version"], "a new password default is a change")

		tpl := described(formWorkflow("same-template", "********"), "first")
		f.must(t, http.StatusCreated, admin, http.MethodPost, templates, tpl)
		got = f.must(t, http.StatusOK, admin, http.MethodPut, templates, tpl)
		assert.Equal(t, float64(1), got.body["version"], "a template saved unchanged")
		got = f.must(t, http.StatusOK, admin, http.MethodPut, templates, described(formWorkflow("same-template", "********"), "second"))
		assert.Equal(t, float64(2), got.body["version"], "a template changed")
	})
}

// A dry run answers what a PUT would save, validated, and saves nothing: a new version, the
// same one when nothing changes, a new workflow.
func TestDryRunSavesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixtureOptions{})
	f.must(t, http.StatusCreated, editor, http.MethodPost, base, described(formWorkflow("dry", "s3cret"), "first"))
	would := f.must(t, http.StatusOK, editor, http.MethodPut, base+"?dryRun=true", described(formWorkflow("dry", "********"), "second"))
	assert.Equal(t, float64(2), would.body["version"])
	assert.Equal(t, "second", would.body["description"])
	assert.NotContains(t, string(would.raw), "s3cret")
	same := f.must(t, http.StatusOK, editor, http.MethodPut, base+"?dryRun=true", described(formWorkflow("dry", "********"), "first"))
	assert.Equal(t, float64(1), same.body["version"], "nothing would change")
	got := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/dry", nil)
	assert.Equal(t, float64(1), got.body["version"])
	assert.Equal(t, "first", got.body["description"])

	created := f.must(t, http.StatusCreated, editor, http.MethodPut, base+"?dryRun=true", formWorkflow("fresh", "x"))
	assert.Equal(t, float64(1), created.body["version"])
	f.must(t, http.StatusNotFound, reader, http.MethodGet, base+"/fresh", nil)
	f.must(t, http.StatusBadRequest, editor, http.MethodPut, base+"?dryRun=true", `{"name":"broken","tasks":[{"name":"a","type":"nope"}]}`)
}
