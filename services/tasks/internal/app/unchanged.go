package app

import (
	"bytes"
	"encoding/json"

	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// notWritten stops an update without writing, answering task: the latest version when
// the save changes nothing, what would be saved on a dry run.
type notWritten struct{ task domain.Task }

func (notWritten) Error() string { return "task not written" }

// sameTask reports whether next holds what cur, the latest version, holds already:
// everything but what each save sets (version, creation date, changelog), compared in a
// canonical form.
func sameTask(cur, next domain.Task) (bool, error) {
	a, err := canonical(cur)
	if err != nil {
		return false, err
	}
	b, err := canonical(next)
	if err != nil {
		return false, err
	}
	return bytes.Equal(a, b), nil
}

// canonical is t as JSON written one way whichever way it was sent: in the form the
// store keeps and reads answer (a parameter's label defaulting to its name), without its
// version, creation date and changelog, object keys sorted (JSON values of defaults and
// annotations included), and empty values (null, "", false, [], {}) left out, an empty
// value saying what an absent one says.
func canonical(t domain.Task) ([]byte, error) {
	raw, err := taskjson.Encode(t)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	for _, k := range []string{"version", "creationDate", "changelog"} {
		delete(doc, k)
	}
	return json.Marshal(prune(doc))
}

// prune removes the empty values of v's objects, at every depth.
func prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			e = prune(e)
			if empty(e) {
				delete(v, k)
				continue
			}
			v[k] = e
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = prune(e)
		}
		return v
	}
	return v
}

func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case string:
		return v == ""
	case bool:
		return !v
	case []any:
		return len(v) == 0
	case map[string]any:
		return len(v) == 0
	}
	return false
}
