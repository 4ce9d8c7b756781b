package mongox

import "strings"

// fullStop stands for `.` in a key kept as a field name: MongoDB reads a dot in a filter
// as a path into a sub-document, and FerretDB v1 refuses dotted field names in documents
// outright. U+FF0E is the stand-in MongoDB's documentation suggests; label keys, the keys
// stored this way, are ASCII (names.CheckLabelKey), so it never appears in one.
const fullStop = "\uff0e"

// FieldName answers key as a field name a document or a filter can hold: its dots
// replaced by a stand-in that FieldKey turns back. A key without dots is its own field
// name, so documents written before keys were escaped read the same.
func FieldName(key string) string { return strings.ReplaceAll(key, ".", fullStop) }

// FieldKey answers the key FieldName made name of.
func FieldKey(name string) string { return strings.ReplaceAll(name, fullStop, ".") }

// FieldNames answers m with its keys made field names (FieldName); nil for an empty m.
func FieldNames[V any](m map[string]V) map[string]V { return rekeyed(m, FieldName) }

// FieldKeys answers m, read from a document, with its field names turned back into keys
// (FieldKey); nil for an empty m.
func FieldKeys[V any](m map[string]V) map[string]V { return rekeyed(m, FieldKey) }

func rekeyed[V any](m map[string]V, key func(string) string) map[string]V {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[key(k)] = v
	}
	return out
}
