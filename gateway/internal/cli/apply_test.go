package cli_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const applyWorkflow = `# the release pipeline
name: release
description: Ships it.
params:
  - name: env
    type: text
    default: staging
tasks:
  - name: start
    type: start
  - name: ship
    type: script
    dependencies: [{taskRef: start}]
    params:
      - name: script
        value: echo shipping to $(params.env)
  - name: end
    type: end
    dependencies: [{taskRef: ship}]
`

const applyTemplate = `{"kind": "WorkflowTemplate", "name": "one-step", "description": "One script.",
 "tasks": [{"name": "start", "type": "start"},
  {"name": "run", "type": "script", "dependencies": [{"taskRef": "start"}], "params": [{"name": "script", "value": "true"}]},
  {"name": "end", "type": "end", "dependencies": [{"taskRef": "run"}]}]}`

// apply creates what files describe, changes nothing when run again (no new version),
// prints what would change with --dry-run without saving it, saves it without, and says
// which document it refused and why.
func TestApplyAgainstAServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newApplyFixture(t)
	admin, dir, write := f.admin, f.dir, f.write
	check := func(name string, wantCode int, args ...string) {
		t.Helper()
		f.check(name, wantCode, nil, args...)
	}
	version := func() int64 {
		t.Helper()
		w, err := admin.GetWorkflow(ctx, "infra", "release")
		require.NoError(t, err)
		return w.Version
	}
	check("apply-login", 0, "login", "--server", f.srv.url, "--token", f.srv.token, "--team", "infra")
	write("release.yaml", applyWorkflow)
	write("template.json", applyTemplate)
	write("notes.txt", "not read")

	check("apply-create", 0, "apply", "-f", dir)
	check("apply-again", 0, "apply", "-f", dir)
	assert.EqualValues(t, 1, version(), "applied twice, one version")

	write("release.yaml", strings.Replace(applyWorkflow, "default: staging", "default: production", 1))
	check("apply-dry-run", 0, "apply", "-f", filepath.Join(dir, "release.yaml"), "--dry-run")
	assert.EqualValues(t, 1, version(), "a dry run saves nothing")
	check("apply-change", 0, "apply", "-f", filepath.Join(dir, "release.yaml"))
	assert.EqualValues(t, 2, version())
	w, err := admin.GetWorkflow(ctx, "infra", "release")
	require.NoError(t, err)
	assert.Equal(t, "production", w.Params[0].Default)

	// A document the server refuses is named, and the others are applied.
	write("broken.yaml", "name: broken\ntasks:\n  - name: start\n    type: nope\n---\nname: fine\ntasks:\n  - {name: start, type: start}\n  - {name: end, type: end, dependencies: [{taskRef: start}]}\n")
	check("apply-refused", 1, "apply", "-f", filepath.Join(dir, "broken.yaml"))
	write("pipeline.yaml", "kind: Pipeline\nname: x\n")
	check("apply-unknown-kind", 1, "apply", "-f", filepath.Join(dir, "pipeline.yaml"))
	write("ops.yaml", "team: infra\n"+applyWorkflow)
	check("apply-other-team", 1, "apply", "-f", filepath.Join(dir, "ops.yaml"), "--team", "ops")
}
