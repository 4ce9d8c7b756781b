package sqlitex

import "context"

// Ping checks that the database answers a read.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	return db.QueryRow(ctx, `SELECT 1`).Scan(&one)
}

// OpenStore opens the database file at path, with the default options, and makes a
// service's store over it with newStore (which brings the schema up to date); the database
// is closed again when newStore fails. Each service's store keeps the database it opened
// this way, and closes it when closed.
func OpenStore[S any](ctx context.Context, path string, newStore func(*DB) (S, error)) (S, error) {
	db, err := Open(ctx, path, Options{})
	if err != nil {
		var zero S
		return zero, err
	}
	s, err := newStore(db)
	if err != nil {
		db.Close()
		var zero S
		return zero, err
	}
	return s, nil
}
