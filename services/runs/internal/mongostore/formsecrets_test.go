package mongostore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/mongostore"
)

// storedText is every document of db as extended JSON, task runs' packed pages unpacked,
// and how many were.
func storedText(t *testing.T, db *mongo.Database) (string, int) {
	t.Helper()
	ctx := context.Background()
	names, err := db.ListCollectionNames(ctx, bson.M{})
	require.NoError(t, err)
	var stored strings.Builder
	unpacked := 0
	for _, name := range names {
		cur, err := db.Collection(name).Find(ctx, bson.M{})
		require.NoError(t, err)
		var docs []bson.M
		require.NoError(t, cur.All(ctx, &docs))
		for _, doc := range docs {
			// Task runs are stored packed: what is inside is looked at too.
			if packed, ok := doc["packed"].(bson.Binary); ok {
				doc["packed"], err = mongostore.Unpacked(packed)
				require.NoError(t, err)
				unpacked++
			}
		}
		raw, err := bson.MarshalExtJSON(bson.M{"docs": docs}, false, false)
		require.NoError(t, err)
		stored.Write(raw)
	}
	return stored.String(), unpacked
}

// A manual task's form that gives a password field a default holds a secret: the run's
// definition and the task run keep the form sealed, and read it back opened.
func TestFormWithAPasswordDefaultIsSealedAtRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, db := newStoreDB(t)
	const secret = "f0rm-default-pw"
	form := json.RawMessage(`[{"name":"user","type":"text","default":"shown"},{"name":"pw","type":"password","default":"` + secret + `"}]`)
	manual := domain.TaskDef{Name: "ask", Type: tasktype.Manual, Params: []domain.TaskParam{{Name: "params", Value: form}},
		Dependencies: []domain.Dependency{{TaskRef: "start"}}}
	plain := domain.TaskDef{Name: "plain", Type: tasktype.Manual, Params: []domain.TaskParam{{Name: "params", Value: json.RawMessage(`[{"name":"note","type":"text","default":"shown"}]`)}},
		Dependencies: []domain.Dependency{{TaskRef: "start"}}}
	def := &domain.Definition{Name: "w", Tasks: []domain.TaskDef{{Name: "start", Type: tasktype.Start}, manual, plain,
		{Name: "end", Type: tasktype.End, Dependencies: []domain.Dependency{{TaskRef: "ask"}, {TaskRef: "plain"}}}}}
	r, tasks, err := domain.NewRun("run-form", def, domain.SubmitRequest{}, "manual", domain.Initiator{}, time.Now(), domain.Limits{MaxDuration: 5})
	require.NoError(t, err)
	var decoded any
	require.NoError(t, json.Unmarshal(form, &decoded))
	tasks[1].Params, tasks[1].SecretParams = map[string]any{"params": decoded}, []string{"params"}
	require.NoError(t, s.CreateRun(ctx, r, tasks))

	stored, unpacked := storedText(t, db)
	require.Contains(t, stored, "shown", "the documents were read")
	require.Positive(t, unpacked, "the task runs were read")
	assert.NotContains(t, stored, secret)

	back, err := s.FindRun(ctx, r.ID)
	require.NoError(t, err)
	back.Definition, err = s.FindDefinition(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, manual, back.Definition.Tasks[1], "the form is read back opened")
	assert.Equal(t, plain, back.Definition.Tasks[2], "a form without a secret is kept as it is")
	all, err := s.FindTaskRuns(ctx, back)
	require.NoError(t, err)
	assert.Equal(t, tasks[1].Params, all[1].Params)
}
