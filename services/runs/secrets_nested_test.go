package runs_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/secrets"
)

// A secret inside an object a parent passes to its child is masked on its own there: the
// attempt of the child's script that substitutes only that field masks it in its log.
func TestSecretInsideAnObjectIsMaskedAlone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const pw = "n3sted-Secret-value"
	f.defs.put("infra", chain("taker", map[string]any{"name": "use", "type": "script",
		"params": []map[string]any{{"name": "script", "value": "echo $(params.data.key)"}}}))
	giver := chain("giver", map[string]any{"name": "kid", "type": "runworkflow", "params": []map[string]any{
		{"name": "workflowRef", "value": "taker"},
		{"name": "params", "value": map[string]any{"data": map[string]any{"key": "$(params.pw)", "who": "ann"}}}}})
	giver["params"] = []map[string]any{{"name": "pw", "type": "password"}}
	f.defs.put("infra", giver)
	f.must(t, http.StatusCreated, owner, http.MethodPost, infra+"/workflow/giver/submit?start=true",
		map[string]any{"params": map[string]any{"pw": pw}})

	var a events.TaskAttempt
	f.consume(t, events.TaskDispatch, func(e event.Event) bool {
		d, err := events.Decode[events.TaskAttempt](e)
		if err != nil || d.Workflow != "taker" {
			return false
		}
		a = d
		return true
	})
	raw, err := json.Marshal(a)
	require.NoError(t, err)
	assert.NotContains(t, string(raw), pw, "the attempt crosses the broker sealed")
	box, err := secrets.FromString(testSecretKey)
	require.NoError(t, err)
	opened, err := a.Opened(box)
	require.NoError(t, err)
	require.Equal(t, "echo "+pw, opened.Spec.Script)
	assert.Contains(t, opened.Secrets, pw, "the field is masked alone")
	assert.NotContains(t, opened.Secrets, "ann", "a short string beside it is not")
}
