package domain

import (
	"encoding/json"
	"slices"

	"github.com/baton-flow/baton/libs/paramref"
)

// AvailableParameters lists what tasks of w may reference, without `$()` (API.md §3):
// parameters of every layer (`params.x` finds the innermost), each layer by name, the
// context parameters, and the results of w's tasks. results maps a task name to result
// names its catalogue task declares, beside those the workflow task declares itself.
func AvailableParameters(w Workflow, global, team []string, results map[string][]string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var workflow []string
	for _, p := range w.Params {
		workflow = append(workflow, p.Name)
	}
	for _, layer := range [][]string{workflow, global, team} {
		for _, name := range layer {
			add(paramref.Params + name)
		}
	}
	for _, name := range workflow {
		add(paramref.WorkflowParams + name)
	}
	for _, name := range global {
		add(paramref.GlobalParams + name)
	}
	for _, name := range team {
		add(paramref.TeamParams + name)
	}
	for _, name := range paramref.ContextNames {
		add(paramref.ContextParams + name)
	}
	for _, t := range w.Tasks {
		names := append(ResultNames(t.Results), results[t.Name]...)
		slices.Sort(names)
		for _, r := range slices.Compact(names) {
			add(paramref.Tasks + t.Name + ".results." + r)
		}
	}
	return out
}

// ResultNames reads the names of declared results: a list of names or of {name} objects.
func ResultNames(raw json.RawMessage) []string {
	if !present(raw) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	var out []string
	for _, item := range items {
		var name string
		if json.Unmarshal(item, &name) != nil {
			var obj struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(item, &obj) != nil {
				continue
			}
			name = obj.Name
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}
