package standalone_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/libs/auth"
)

// gates is one Baton with team "rel": members ann, bob and cy (editors), approver group
// "leads" of ann and bob, and a user token for each.
type gates struct {
	*baton
	key    string
	tokens map[string]string
	ids    map[string]string
}

const gatesServiceKey = "gates-test-service-key-0123456789"

func startGates(t *testing.T) *gates {
	t.Helper()
	return setUpGates(t, start(t, map[string]string{"BATON_DATA_DIR": t.TempDir(), "BATON_GATEWAY_ADDR": "127.0.0.1:0",
		"BATON_LOG_LEVEL": "error", "BATON_SERVICE_KEY": gatesServiceKey}))
}

// setUpGates makes gates' team and tokens on b, started with BATON_SERVICE_KEY gatesServiceKey.
func setUpGates(t *testing.T, b *baton) *gates {
	t.Helper()
	g := &gates{baton: b, key: gatesServiceKey, tokens: map[string]string{}, ids: map[string]string{}}
	code, out := b.call(t, http.MethodPost, "/api/v2/team", b.token, `{"name":"rel","members":[
		{"email":"ann@example.com","role":"editor"},{"email":"bob@example.com","role":"editor"},{"email":"cy@example.com","role":"editor"}]}`)
	require.Equal(t, http.StatusCreated, code, out)
	code, users := b.call(t, http.MethodGet, "/api/v2/user/query", b.token, "")
	require.Equal(t, http.StatusOK, code, users)
	for _, u := range users["content"].([]any) {
		u := u.(map[string]any)
		name, _, _ := strings.Cut(u["email"].(string), "@")
		g.ids[name] = u["id"].(string)
	}
	for _, name := range []string{"ann", "bob", "cy"} {
		require.NotEmpty(t, g.ids[name], name)
		code, tok := b.call(t, http.MethodPost, "/api/v2/token", b.token, `{"type":"user","name":"`+name+`","principal":"`+g.ids[name]+`"}`)
		require.Equal(t, http.StatusCreated, code, tok)
		g.tokens[name] = tok["token"].(string)
	}
	code, out = b.call(t, http.MethodPatch, "/api/v2/team/rel", b.token, `{"approverGroups":[{"name":"leads","approvers":["ann@example.com","bob@example.com"]}]}`)
	require.Equal(t, http.StatusOK, code, out)
	return g
}

// workflow saves a workflow of team rel, once the team has reached the workflows service.
func (g *gates) workflow(t *testing.T, body string) {
	t.Helper()
	require.Eventually(t, func() bool {
		code, out := g.call(t, http.MethodPost, "/api/v2/team/rel/workflow", g.token, body)
		require.NotEqual(t, http.StatusBadRequest, code, "%v", out)
		return code == http.StatusCreated
	}, 30*time.Second, 20*time.Millisecond)
}

// submit starts a run of workflow as token's caller.
func (g *gates) submit(t *testing.T, workflow, token, body string) string {
	t.Helper()
	code, run := g.call(t, http.MethodPost, "/api/v2/team/rel/workflow/"+workflow+"/submit?start=true", token, body)
	require.Equal(t, http.StatusCreated, code, run)
	return run["id"].(string)
}

// run reads a run once it satisfies ok.
func (g *gates) run(t *testing.T, id string, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	var run map[string]any
	require.Eventually(t, func() bool {
		var code int
		code, run = g.call(t, http.MethodGet, "/api/v2/team/rel/workflowrun/"+id, g.token, "")
		return code == http.StatusOK && ok(run)
	}, 30*time.Second, 10*time.Millisecond, "run %s", id)
	return run
}

func ended(r map[string]any) bool { return r["phase"] == "completed" }

// task answers task name of run r.
func task(r map[string]any, name string) map[string]any {
	for _, x := range r["tasks"].([]any) {
		if x := x.(map[string]any); x["name"] == name {
			return x
		}
	}
	return nil
}

// action answers the open action of run id, once it exists.
func (g *gates) action(t *testing.T, id string) string {
	t.Helper()
	var found string
	require.Eventually(t, func() bool {
		code, page := g.call(t, http.MethodGet, "/api/v2/team/rel/action/query?statuses=submitted&limit=100", g.token, "")
		if code != http.StatusOK {
			return false
		}
		for _, a := range page["content"].([]any) {
			if a := a.(map[string]any); a["workflowRunRef"] == id {
				found = a["id"].(string)
				return true
			}
		}
		return false
	}, 30*time.Second, 10*time.Millisecond)
	return found
}

func (g *gates) decide(t *testing.T, token, body string) (int, map[string]any) {
	t.Helper()
	return g.call(t, http.MethodPut, "/api/v2/team/rel/action", token, body)
}

const approvalFlow = `{"name":"ship","tasks":[{"name":"start","type":"start"},
	{"name":"approve","type":"approval","params":[{"name":"approverGroupRef","value":"leads"},{"name":"numberOfApprovers","value":2},
		{"name":"instructions","value":"Check staging first."}],"dependencies":[{"taskRef":"start"}]},
	{"name":"end","type":"end","dependencies":[{"taskRef":"approve","executionCondition":"success"}]}]}`

func TestIntegrationApprovals(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, approvalFlow)

	// Quorum: two leads approve; an outsider, a second vote and a token are refused.
	id := g.submit(t, "ship", g.tokens["cy"], `{}`)
	assert.Equal(t, true, g.run(t, id, func(r map[string]any) bool { return r["awaitingApproval"] == true })["awaitingApproval"])
	act := g.action(t, id)
	code, out := g.decide(t, g.tokens["cy"], `[{"id":"`+act+`","approved":true}]`)
	assert.Equal(t, http.StatusForbidden, code, "cy is not a lead: %v", out)
	code, out = g.decide(t, g.token, `[{"id":"`+act+`","approved":true}]`)
	assert.Equal(t, http.StatusForbidden, code, "tokens are not people: %v", out)
	code, out = g.decide(t, g.tokens["ann"], `[{"id":"`+act+`","approved":true,"comments":"looks good"}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	code, out = g.decide(t, g.tokens["ann"], `[{"id":"`+act+`","approved":true}]`)
	assert.Equal(t, http.StatusConflict, code, "one vote per person: %v", out)
	_, a := g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, g.token, "")
	assert.Equal(t, "submitted", a["status"])
	assert.EqualValues(t, 1, a["numberOfApprovals"])
	assert.Equal(t, "looks good", a["actioners"].([]any)[0].(map[string]any)["comments"])
	code, out = g.decide(t, g.tokens["bob"], `[{"id":"`+act+`","approved":true}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	done := g.run(t, id, ended)
	assert.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, false, done["awaitingApproval"])
	_, a = g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, g.token, "")
	assert.Equal(t, "approved", a["status"])
	assert.Len(t, a["actioners"], 2)

	// One rejection rejects.
	id = g.submit(t, "ship", g.tokens["cy"], `{}`)
	act = g.action(t, id)
	code, out = g.decide(t, g.tokens["bob"], `[{"id":"`+act+`","approved":false,"comments":"not today"}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	done = g.run(t, id, ended)
	assert.Equal(t, "failed", done["status"])
	assert.Equal(t, "failed", task(done, "approve")["status"])

	// A batch with one bad item changes nothing.
	id = g.submit(t, "ship", g.tokens["cy"], `{}`)
	act = g.action(t, id)
	code, out = g.decide(t, g.tokens["ann"], `[{"id":"`+act+`","approved":true},{"id":"`+id+`.9-1","approved":true}]`)
	assert.Equal(t, http.StatusNotFound, code, out)
	assert.Equal(t, "ACTION_NOT_FOUND", out["reason"])
	_, a = g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, g.token, "")
	assert.Empty(t, a["actioners"], "nothing was applied")

	// Summary and search.
	code, sum := g.call(t, http.MethodGet, "/api/v2/team/rel/action/summary", g.token, "")
	require.Equal(t, http.StatusOK, code, sum)
	assert.EqualValues(t, 1, sum["approvals"])
	assert.EqualValues(t, 67, sum["approvalsRate"], "two of three decided")
	code, page := g.call(t, http.MethodGet, "/api/v2/team/rel/action/query?types=approval&statuses=approved,rejected&order=ASC", g.token, "")
	require.Equal(t, http.StatusOK, code, page)
	assert.EqualValues(t, 2, page["totalElements"])

	// Cancelling the run cancels its open action.
	code, out = g.call(t, http.MethodDelete, "/api/v2/team/rel/workflowrun/"+id+"/cancel", g.token, "")
	require.Equal(t, http.StatusOK, code, out)
	require.Eventually(t, func() bool {
		_, a = g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, g.token, "")
		return a["status"] == "cancelled"
	}, 30*time.Second, 10*time.Millisecond)
}

func TestIntegrationSelfApproval(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, strings.Replace(approvalFlow, `{"name":"numberOfApprovers","value":2},`, "", 1))

	// Without the setting, ann approves her own run.
	id := g.submit(t, "ship", g.tokens["ann"], `{}`)
	code, out := g.decide(t, g.tokens["ann"], `[{"id":"`+g.action(t, id)+`","approved":true}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	assert.Equal(t, "succeeded", g.run(t, id, ended)["status"])

	// With it, she cannot, whatever credential started the run; bob can.
	req, err := http.NewRequest(http.MethodPut, g.url+"/api/v2/settings", strings.NewReader(`[{"key":"actions","config":[{"key":"preventSelfApproval","value":true}]}]`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+g.token)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	code, tok := g.call(t, http.MethodPost, "/api/v2/token", g.tokens["ann"], `{"type":"team","name":"anns-ci","principal":"rel","permissions":["workflowrun/write","workflowrun/read","workflowrun/action"]}`)
	require.Equal(t, http.StatusCreated, code, tok)
	for _, token := range []string{g.tokens["ann"], tok["token"].(string)} {
		id = g.submit(t, "ship", token, `{}`)
		act := g.action(t, id)
		code, out = g.decide(t, g.tokens["ann"], `[{"id":"`+act+`","approved":true}]`)
		assert.Equal(t, http.StatusForbidden, code, "the setting holds at once: %v", out)
		code, out = g.decide(t, g.tokens["bob"], `[{"id":"`+act+`","approved":true}]`)
		require.Equal(t, http.StatusNoContent, code, out)
		assert.Equal(t, "succeeded", g.run(t, id, ended)["status"])
	}
}

func TestIntegrationManualForm(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, `{"name":"release","tasks":[{"name":"start","type":"start"},
		{"name":"fill","type":"manual","params":[{"name":"instructions","value":"Pick the **version**."},
			{"name":"params","value":[{"name":"version","type":"text","required":true,"maxValueLength":10},
				{"name":"env","type":"select","options":[{"key":"staging","value":"Staging"},{"key":"prod","value":"Production"}]}]}],
			"dependencies":[{"taskRef":"start"}]},
		{"name":"record","type":"setwfproperty","params":[{"name":"output","value":"shipped"},{"name":"value","value":"$(tasks.fill.results.version)@$(tasks.fill.results.env)"}],"dependencies":[{"taskRef":"fill"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"record"}]}]}`)
	id := g.submit(t, "release", g.token, `{}`)
	act := g.action(t, id)
	_, a := g.call(t, http.MethodGet, "/api/v2/team/rel/action/"+act, g.token, "")
	assert.Equal(t, "manual", a["type"])
	assert.Len(t, a["params"], 2)

	code, out := g.decide(t, g.tokens["cy"], `[{"id":"`+act+`","approved":true,"params":{"version":"far-too-long-a-version","env":"qa"}}]`)
	require.Equal(t, http.StatusBadRequest, code, out)
	var fields []string
	for _, e := range out["errors"].([]any) {
		fields = append(fields, e.(map[string]any)["field"].(string))
	}
	assert.ElementsMatch(t, []string{"[0].params.version", "[0].params.env"}, fields)

	code, out = g.decide(t, g.tokens["cy"], `[{"id":"`+act+`","approved":true,"params":[{"name":"version","value":"1.4.2"},{"name":"env","value":"prod"}]}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	done := g.run(t, id, ended)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, []any{map[string]any{"name": "shipped", "value": "1.4.2@prod"}}, done["results"])
}

func TestIntegrationCallbacks(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, `{"name":"hook","tasks":[{"name":"start","type":"start"},
		{"name":"first","type":"eventwait","params":[{"name":"topic","value":"built"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"second","type":"eventwait","params":[{"name":"topic","value":"tested"}],"dependencies":[{"taskRef":"first"}]},
		{"name":"record","type":"setwfproperty","params":[{"name":"output","value":"report"},{"name":"value","value":"$(tasks.second.results.data)"}],"dependencies":[{"taskRef":"second"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"record"}]}]}`)
	signer, err := auth.NewSigner([]byte(g.key))
	require.NoError(t, err)

	id := g.submit(t, "hook", g.token, `{}`)
	// "tested" comes before its task waits: kept, and applied when it starts.
	code, out := g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=tested&status=SUCCEEDED", signer.RunToken(id), `{"passed": 12}`)
	require.Equal(t, http.StatusNoContent, code, out)
	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=built", signer.RunToken("another-run"), `{}`)
	assert.Equal(t, http.StatusForbidden, code, "another run's token: %v", out)
	code, out = g.call(t, http.MethodGet, "/api/v2/callback?ref="+id+"&topic=built&status=nope", g.token, "")
	assert.Equal(t, http.StatusBadRequest, code, out)
	code, out = g.call(t, http.MethodGet, "/api/v2/callback?ref="+id+"&topic=built", g.token, "")
	require.Equal(t, http.StatusNoContent, code, out)
	done := g.run(t, id, ended)
	require.Equal(t, "succeeded", done["status"], done)
	assert.Equal(t, []any{map[string]any{"name": "report", "value": `{"passed":12}`}}, done["results"])

	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=built", g.token, `{}`)
	assert.Equal(t, http.StatusConflict, code, "finished: %v", out)
	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=built", signer.RunToken(id), `{}`)
	assert.Equal(t, http.StatusUnauthorized, code, "the token expired with its run: %v", out)
	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref=019a2f3c-5e6d-7a8b-9c0d-1e2f3a4b5c6d&topic=built", g.token, `{}`)
	assert.Equal(t, http.StatusNotFound, code, out)

	// A failed callback fails its task.
	id = g.submit(t, "hook", g.token, `{}`)
	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=built&status=failed", g.token, "")
	require.Equal(t, http.StatusNoContent, code, out)
	done = g.run(t, id, func(r map[string]any) bool { return task(r, "second")["status"] == "waiting" })
	assert.Equal(t, "failed", task(done, "first")["status"], "an always edge carries the run on")
}

func TestIntegrationLocks(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, `{"name":"deploy","tasks":[{"name":"start","type":"start"},
		{"name":"lock","type":"acquirelock","params":[{"name":"key","value":"prod"}],"dependencies":[{"taskRef":"start"}]},
		{"name":"go","type":"eventwait","params":[{"name":"topic","value":"go"}],"dependencies":[{"taskRef":"lock"}]},
		{"name":"unlock","type":"releaselock","params":[{"name":"key","value":"prod"}],"dependencies":[{"taskRef":"go"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"unlock"}]}]}`)
	now := func(map[string]any) bool { return true }
	holds := func(id string) bool { return task(g.run(t, id, now), "lock")["status"] == "succeeded" }
	// Three runs, in order: the first holds the lock, the others wait in arrival order.
	var runs []string
	for range 3 {
		runs = append(runs, g.submit(t, "deploy", g.token, `{}`))
	}
	g.run(t, runs[0], func(r map[string]any) bool { return task(r, "lock")["status"] == "succeeded" })
	for _, id := range runs[1:] {
		assert.Equal(t, "waiting", task(g.run(t, id, now), "lock")["status"])
	}
	for i, id := range runs {
		g.run(t, id, func(r map[string]any) bool { return task(r, "lock")["status"] == "succeeded" })
		for _, later := range runs[i+1:] {
			assert.False(t, holds(later), "run %d waits behind run %d", i+1, i)
		}
		code, out := g.call(t, http.MethodGet, "/api/v2/callback?ref="+id+"&topic=go", g.token, "")
		require.Equal(t, http.StatusNoContent, code, out)
		assert.Equal(t, "succeeded", g.run(t, id, ended)["status"])
	}

	// A run that ends for any reason lets its lock go.
	first, second := g.submit(t, "deploy", g.token, `{}`), g.submit(t, "deploy", g.token, `{}`)
	g.run(t, first, func(r map[string]any) bool { return task(r, "lock")["status"] == "succeeded" })
	code, out := g.call(t, http.MethodDelete, "/api/v2/team/rel/workflowrun/"+first+"/cancel", g.token, "")
	require.Equal(t, http.StatusOK, code, out)
	g.run(t, second, func(r map[string]any) bool { return task(r, "lock")["status"] == "succeeded" })
}

// The gates' endpoints take hostile input as input: bad values, operator characters, NUL
// bytes, oversized and deeply nested bodies, too many kept callbacks are each refused with
// a 4xx (or taken as the free text they are), never a 5xx, and the run they aimed at still
// moves on as it should afterwards.
func TestIntegrationGatesRefuseHostileInput(t *testing.T) {
	t.Parallel()
	g := startGates(t)
	g.workflow(t, `{"name":"hostile","tasks":[{"name":"start","type":"start"},
		{"name":"fill","type":"manual","params":[{"name":"instructions","value":"Name the version."},
			{"name":"params","value":[{"name":"version","type":"text","required":true}]}],
			"dependencies":[{"taskRef":"start"}]},
		{"name":"hook","type":"eventwait","params":[{"name":"topic","value":"go"}],"dependencies":[{"taskRef":"fill"}]},
		{"name":"end","type":"end","dependencies":[{"taskRef":"hook"}]}]}`)
	id := g.submit(t, "hostile", g.token, `{}`)
	act := g.action(t, id)
	deep := strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000)
	tests := []struct {
		name, method, path, body string
		// clientError says the request must be refused (4xx); otherwise any answer below
		// 500 will do (free text taken as it is).
		clientError bool
	}{
		{"callback topic with NUL", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=a%00b", "", false},
		{"callback topic with operators", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=%24gt.x%24", `{}`, false},
		{"callback topic of 10 KiB", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=" + strings.Repeat("t", 10<<10), "", false},
		{"callback status unknown", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=go&status=maybe%00", "", true},
		{"callback ref a path", http.MethodPost, "/api/v2/callback?ref=..%2F..%2Fteam&topic=go", "", true},
		{"callback without ref", http.MethodGet, "/api/v2/callback?topic=go", "", true},
		{"callback data of 70 KiB", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=big", `{"x":"` + strings.Repeat("d", 70<<10) + `"}`, true},
		{"callback data nested 5,000 deep", http.MethodPost, "/api/v2/callback?ref=" + id + "&topic=deep", deep, true},
		{"decision not a list", http.MethodPut, "/api/v2/team/rel/action", `{"id":"` + act + `"}`, false},
		{"decision approved not a boolean", http.MethodPut, "/api/v2/team/rel/action", `[{"id":"` + act + `","approved":"yes"}]`, true},
		{"decision id with NUL", http.MethodPut, "/api/v2/team/rel/action", `[{"id":"a\u0000b","approved":true}]`, true},
		{"decision id an operator", http.MethodPut, "/api/v2/team/rel/action", `[{"id":{"$ne":""},"approved":true}]`, true},
		{"101 decisions", http.MethodPut, "/api/v2/team/rel/action", "[" + strings.TrimSuffix(strings.Repeat(`{"id":"`+act+`","approved":true},`, 101), ",") + "]", true},
		{"decision comments of 1 MiB", http.MethodPut, "/api/v2/team/rel/action", `[{"id":"` + act + `","approved":true,"comments":"` + strings.Repeat("c", 1<<20) + `"}]`, true},
		{"form values nested 5,000 deep", http.MethodPut, "/api/v2/team/rel/action", `[{"id":"` + act + `","approved":true,"params":{"version":` + deep + `}}]`, true},
		{"form value of the wrong type", http.MethodPut, "/api/v2/team/rel/action", `[{"id":"` + act + `","approved":true,"params":{"version":{"$gt":""}}}]`, true},
		{"action id with NUL", http.MethodGet, "/api/v2/team/rel/action/a%00b", "", true},
		{"action id of 10 KiB", http.MethodGet, "/api/v2/team/rel/action/" + strings.Repeat("i", 10<<10), "", true},
		{"query fromDate overflowing", http.MethodGet, "/api/v2/team/rel/action/query?fromDate=999999999999999999999", "", true},
		{"query limit negative", http.MethodGet, "/api/v2/team/rel/action/query?limit=-1", "", true},
		{"query page 1e309", http.MethodGet, "/api/v2/team/rel/action/query?page=1e309", "", true},
		{"query sort an operator", http.MethodGet, "/api/v2/team/rel/action/query?sort=%24where", "", true},
		{"query type unknown", http.MethodGet, "/api/v2/team/rel/action/query?types=nope", "", true},
		{"summary toDate not a number", http.MethodGet, "/api/v2/team/rel/action/summary?toDate=yesterday", "", true},
	}
	for _, tt := range tests {
		code, out := g.call(t, tt.method, tt.path, g.tokens["ann"], tt.body)
		assert.Less(t, code, 500, "%s: %v", tt.name, out)
		if tt.clientError {
			assert.GreaterOrEqual(t, code, 400, "%s: %v", tt.name, out)
		}
	}
	// Kept callbacks are bounded: past the bound a callback for a task not waiting yet is
	// refused, not kept.
	var last int
	var refusal map[string]any
	for i := range 120 {
		last, refusal = g.call(t, http.MethodPost, fmt.Sprintf("/api/v2/callback?ref=%s&topic=early-%d", id, i), g.token, "")
		if last >= 400 {
			break
		}
	}
	assert.Equal(t, http.StatusBadRequest, last, "kept callbacks are bounded")
	assert.Contains(t, refusal["message"], "no more topics are kept")

	// The run still moves on.
	code, out := g.decide(t, g.tokens["cy"], `[{"id":"`+act+`","approved":true,"params":{"version":"1.0"}}]`)
	require.Equal(t, http.StatusNoContent, code, out)
	code, out = g.call(t, http.MethodPost, "/api/v2/callback?ref="+id+"&topic=go", g.token, `{}`)
	require.Equal(t, http.StatusNoContent, code, out)
	done := g.run(t, id, ended)
	assert.Equal(t, "succeeded", done["status"], done)
}
