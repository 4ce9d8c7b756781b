package mongox

import (
	"errors"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// Server error codes meaning a unique index rejected a write.
var duplicateKeyCodes = []int{
	11000, // DuplicateKey
	11001, // duplicate key on update (old servers)
	12582, // duplicate key in a capped collection
}

// ferretDBInternalError is the code FerretDB v1 (SQLite) gives a duplicate key caused by
// an update; see IsDuplicateKey.
const ferretDBInternalError = 1

// IsDuplicateKey reports whether err, or any error it wraps, is a unique-index violation:
// E11000 from MongoDB or FerretDB in a single write, InsertMany or BulkWrite (including
// Client.BulkWrite), or FindOneAndUpdate.
//
// FerretDB v1 on SQLite reports a duplicate key caused by an update, replace or
// findAndModify (not an insert or upsert) as InternalError (code 1) with the SQLite
// message "UNIQUE constraint failed"; that counts too.
func IsDuplicateKey(err error) bool {
	if err == nil {
		return false
	}
	if mongo.IsDuplicateKeyError(err) {
		return true
	}
	var se mongo.ServerError
	if errors.As(err, &se) && se.HasErrorCodeWithMessage(ferretDBInternalError, "UNIQUE constraint failed") {
		return true
	}
	// ClientBulkWriteException lists its codes but is not a mongo.ServerError.
	var cbe mongo.ClientBulkWriteException
	if errors.As(err, &cbe) {
		return slices.ContainsFunc(cbe.ErrorCodes(), func(c int) bool { return slices.Contains(duplicateKeyCodes, c) })
	}
	return false
}
