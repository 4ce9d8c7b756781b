package workflows_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/auth"
)

const formDefault = "f0rm-d3fault"

// formWorkflow is a workflow whose manual task's form gives a password field a default.
func formWorkflow(name, def string) string {
	return `{"name":"` + name + `","tasks":[{"name":"start","type":"start"},
	{"name":"ask","type":"manual","params":[{"name":"instructions","value":"Sign in"},
	 {"name":"params","value":[{"name":"who","type":"text","default":"ann"},{"name":"pw","type":"password","default":"` + def + `"}]}],
	 "dependencies":[{"taskRef":"start"}]},
	{"name":"end","type":"end","dependencies":[{"taskRef":"ask"}]}]}`
}

// formField returns field name of the form of task ask in a workflow's tasks.
func formField(t *testing.T, tasks any, name string) map[string]any {
	t.Helper()
	for _, task := range tasks.([]any) {
		task := task.(map[string]any)
		if task["name"] != "ask" {
			continue
		}
		for _, p := range task["params"].([]any) {
			p := p.(map[string]any)
			if p["name"] != "params" {
				continue
			}
			for _, field := range p["value"].([]any) {
				if field := field.(map[string]any); field["name"] == name {
					return field
				}
			}
		}
	}
	require.Failf(t, "no form field", "%s in %v", name, tasks)
	return nil
}

// A manual task's form that gives a password field a default answers it masked, in every
// read of the workflow; sending the mask back keeps it; at rest it is sealed; the runs
// service's snapshot has it in clear, to offer it in the run's action.
func TestFormPasswordDefaultIsSecret(t *testing.T) {
	t.Parallel()
	bothStores(t, func(t *testing.T, store string) {
		f := newFixture(t, fixtureOptions{store: store})
		created := f.must(t, http.StatusCreated, editor, http.MethodPost, base, formWorkflow("form", formDefault))
		assert.NotContains(t, string(created.raw), formDefault)
		assert.Equal(t, "********", formField(t, created.body["tasks"], "pw")["default"])
		assert.Equal(t, "ann", formField(t, created.body["tasks"], "who")["default"], "other fields are answered as they are")

		for _, path := range []string{base + "/form", base + "/form?version=1", base + "/form/export", base + "/form/compose", "/api/v2/workflow/form/export"} {
			got := f.must(t, http.StatusOK, reader, http.MethodGet, path, nil)
			assert.NotContains(t, string(got.raw), formDefault, path)
			assert.Contains(t, string(got.raw), "********", path)
		}

		// The mask sent back, through the workflow and the canvas, keeps the default.
		// Each save changes the description too: one that changes nothing makes no version.
		f.must(t, http.StatusOK, editor, http.MethodPut, base, described(formWorkflow("form", "********"), "second"))
		canvas := f.must(t, http.StatusOK, reader, http.MethodGet, base+"/form/compose", nil)
		f.must(t, http.StatusOK, editor, http.MethodPut, base+"/form/compose",
			[]byte(strings.Replace(string(canvas.raw), `"description":"second"`, `"description":"third"`, 1)))
		svc := auth.Principal{Type: auth.TypeService, ID: "runs", Name: "runs"}
		for _, v := range []string{"1", "2", "3"} {
			snap := f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/form?version="+v, nil).body
			assert.Equal(t, formDefault, formField(t, snap["tasks"], "pw")["default"], "version %s", v)
		}
		dup := f.must(t, http.StatusCreated, editor, http.MethodPost, base+"/form/duplicate", nil)
		assert.NotContains(t, string(dup.raw), formDefault)
		snap := f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/form-copy", nil).body
		assert.Equal(t, formDefault, formField(t, snap["tasks"], "pw")["default"], "a duplicate copies the default")

		// A new default replaces it.
		f.must(t, http.StatusOK, editor, http.MethodPut, base, formWorkflow("form", "n3w-default"))
		snap = f.must(t, http.StatusOK, svc, http.MethodGet, "/internal/v1/teams/infra/workflows/form", nil).body
		assert.Equal(t, "n3w-default", formField(t, snap["tasks"], "pw")["default"])

		// At rest every version holds it sealed.
		sealed := 0
		for where, doc := range f.storedDocs(t) {
			assert.NotContains(t, doc, formDefault, where)
			assert.NotContains(t, doc, "n3w-default", where)
			if strings.Contains(doc, `"pw"`) {
				assert.Contains(t, doc, `"default":"enc:v1:`, where)
				sealed++
			}
		}
		assert.Equal(t, 5, sealed, "four versions of the workflow and its copy")
	})
}

// storedDocs returns every document of db as extended JSON, its compressed tasks (of a
// version) decompressed after it, by collection and id.
func storedDocs(t *testing.T, db *mongo.Database) map[string]string {
	t.Helper()
	names, err := db.ListCollectionNames(context.Background(), bson.M{})
	require.NoError(t, err)
	out := map[string]string{}
	for _, name := range names {
		cur, err := db.Collection(name).Find(context.Background(), bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(context.Background(), &docs))
		for _, d := range docs {
			raw, err := bson.MarshalExtJSON(d, false, false)
			require.NoError(t, err)
			doc := string(raw)
			if tasks, ok := d["tasks"].(bson.Binary); ok {
				doc += string(unzstd(t, tasks.Data))
			}
			out[fmt.Sprintf("%s %v", name, d["_id"])] = doc
		}
	}
	return out
}
