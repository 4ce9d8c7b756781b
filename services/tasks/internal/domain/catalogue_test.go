package domain

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/baton-flow/baton/libs/tasktype"
)

// TestCatalogueHasEachSystemTypesTask checks that the task tasktype.CatalogueTask names
// for a system type is in the catalogue, of that type: workflows answer it as the taskRef
// of their tasks of the type that name none.
func TestCatalogueHasEachSystemTypesTask(t *testing.T) {
	t.Parallel()
	byName := map[string]Task{}
	for _, task := range Catalogue() {
		byName[task.Name] = task
	}
	types := []string{tasktype.Decision, tasktype.EventWait, tasktype.Approval, tasktype.Manual,
		tasktype.SetWFProperty, tasktype.SetWFStatus, tasktype.Sleep, tasktype.AcquireLock, tasktype.ReleaseLock,
		tasktype.RunWorkflow, tasktype.RunScheduledWorkflow, tasktype.Custom, tasktype.Script, tasktype.Generic}
	for _, typ := range types {
		name := tasktype.CatalogueTask(typ)
		if assert.NotEmpty(t, name, typ) {
			assert.Equal(t, typ, byName[name].Type, "catalogue task %q", name)
		}
	}
	for _, typ := range []string{tasktype.Start, tasktype.End, tasktype.Template} {
		assert.Empty(t, tasktype.CatalogueTask(typ), typ)
	}
}
