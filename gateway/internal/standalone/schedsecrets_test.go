package standalone_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A secret reaches a scheduled run two ways — a schedule's value for a password param,
// and a run's secret that a runscheduledworkflow task passes into a param the scheduled
// workflow calls text — and either way the fired run's script gets the real value, its
// log shows `********`, its params read `********`, and no answer, message of the broker
// or database file holds it.
func TestIntegrationScheduledSecretsStaySecret(t *testing.T) {
	t.Parallel()
	everySecret := map[string]string{
		"schedule": "sch3dule-Secret-value-15",
		"passed":   "p4ssed-Secret-value-48",
		"default":  "def4ult-Secret-value-83",
	}
	o := startObserved(t, nil)
	b := o.baton
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"ops"}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, out = b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"team","name":"reader","principal":"ops","permissions":["**/read"]}`)
	require.Equal(t, http.StatusCreated, code, out)
	reader := out["token"].(string)
	s := &schedules{baton: b}

	script := `h() { printf '%s' "$1" | sha256sum | cut -c1-64; }
echo "token $(params.token) note $(params.note)"
h "$(params.token)" > $(results.token.path)
h "$(params.note)" > $(results.note.path)`
	s.save(t, mustJSON(t, map[string]any{
		"name": "deploy", "triggers": map[string]any{"schedule": map[string]any{"enabled": true}},
		"params": []any{
			map[string]any{"name": "token", "type": "password", "default": everySecret["default"]},
			map[string]any{"name": "note", "type": "text", "default": "plain"},
		},
		"tasks": []any{
			map[string]any{"name": "start", "type": "start"},
			map[string]any{"name": "use", "type": "script", "dependencies": []any{map[string]any{"taskRef": "start"}},
				"results": []any{"token", "note"}, "params": []any{map[string]any{"name": "script", "value": script}}},
			map[string]any{"name": "end", "type": "end", "dependencies": []any{map[string]any{"taskRef": "use"}}},
		},
	}))
	s.save(t, `{"name":"planner","params":[{"name":"pw","type":"password"},{"name":"when","type":"text"}],"tasks":[
		{"name":"start","type":"start"},
		{"name":"later","type":"runscheduledworkflow","dependencies":[{"taskRef":"start"}],"params":[
			{"name":"workflowRef","value":"deploy"},{"name":"time","value":"$(params.when)"},{"name":"timezone","value":"UTC"},
			{"name":"params","value":{"note":"$(params.pw)"}},{"name":"labels","value":{"sched":"planned"}}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"later"}]}]}`)

	// A schedule's password param.
	sch := s.create(t, fmt.Sprintf(`{"name":"often","workflowRef":"deploy","cronSchedule":"* * * * * *","timezone":"UTC",
		"params":[{"name":"token","value":%q}],"labels":{"sched":"cron"}}`, everySecret["schedule"]))
	// A run's secret passed on to the schedule its task makes.
	at := time.Now().UTC().Add(2 * time.Second).Truncate(time.Second)
	planned := s.ended(t, "planner", fmt.Sprintf(`{"pw":%q,"when":%q}`, everySecret["passed"], at.Format(time.RFC3339)))
	require.Equal(t, "succeeded", planned["status"], planned["statusMessage"])

	tests := []struct {
		label, token, note string
		wantLog            string
	}{
		{"cron", everySecret["schedule"], "plain", "token ******** note plain\n"},
		{"planned", everySecret["default"], everySecret["passed"], "token ******** note ********\n"},
	}
	var answers strings.Builder
	for _, tt := range tests {
		var run map[string]any
		require.Eventually(t, func() bool {
			for _, r := range s.runs(t, tt.label) {
				if r["phase"] == "completed" {
					_, run = s.call(t, http.MethodGet, "/api/v2/team/ops/workflowrun/"+r["id"].(string), reader, "")
					return true
				}
			}
			return false
		}, 60*time.Second, 50*time.Millisecond, tt.label)
		if tt.label == "cron" {
			code, _ := s.call(t, http.MethodDelete, "/api/v2/team/ops/schedule/"+sch["id"].(string), s.token, "")
			require.Equal(t, http.StatusNoContent, code, "the schedule fires no more")
		}
		require.Equal(t, "succeeded", run["status"], tt.label)
		use := task(run, "use")
		assert.Equal(t, map[string]any{"token": sha256Hex(tt.token), "note": sha256Hex(tt.note)}, byName(t, use["results"]), "%s: the script got the real values", tt.label)
		params := byName(t, run["params"])
		assert.Equal(t, "********", params["token"], tt.label)
		if tt.note != "plain" {
			assert.Equal(t, "********", params["note"], tt.label)
		}
		log := readAll(t, b, "/api/v2/taskrun/"+use["id"].(string)+"/log", reader)
		assert.Equal(t, tt.wantLog, log, "%s: the log is masked", tt.label)
		answers.WriteString(log)
		answers.WriteString(readAll(t, b, "/api/v2/team/ops/workflowrun/"+run["id"].(string), reader))
	}
	answers.WriteString(readAll(t, b, "/api/v2/team/ops/schedule/query?statuses=active,inactive,completed,archived", reader))
	answers.WriteString(readAll(t, b, "/api/v2/team/ops/workflowrun/query", reader))
	assertNoSecret(t, "the API's answers", []byte(answers.String()), everySecret)

	o.assertNoSecretAtRest(t, "planned", "planner", everySecret)
}
