package crashtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	_ "modernc.org/sqlite" // reads the runs replica's SQLite file, as its store writes it

	"github.com/baton-flow/baton/services/runs"
)

// The runs replicas keep their data in the shared MongoDB, or, alone, in a SQLite file of
// their own as standalone mode does (runs.Config.DatabaseURL). What the test reads of it
// directly, beside the API, is read here from either.

// runsDatabaseURL is the store a runs replica is given: the cluster's SQLite file when it
// has one, else the shared MongoDB.
func (c *cluster) runsDatabaseURL() string {
	if c.runsDB == "" {
		return ""
	}
	return "sqlite:" + c.runsDB
}

// sqlite opens the runs replica's file to read it.
func (c *cluster) sqlite() (*sql.DB, error) {
	path, _, err := runs.SQLitePath(c.runsDatabaseURL())
	if err != nil {
		return nil, err
	}
	u := url.URL{Scheme: "file", Path: path, OmitHost: true, RawQuery: "mode=ro&_pragma=busy_timeout(10000)"}
	return sql.Open("sqlite", u.String())
}

// countInFlight counts the runs in flight.
func (c *cluster) countInFlight(ctx context.Context) (int64, error) {
	if c.runsDB == "" {
		return c.db.Collection("live").CountDocuments(ctx, bson.M{})
	}
	db, err := c.sqlite()
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE live = 1`).Scan(&n)
	return n, err
}

// runInFlight is what leftInFlight shows of a run still in flight.
type runInFlight struct {
	ID     string    `bson:"_id"`
	Owner  string    `bson:"owner"`
	Phase  string    `bson:"phase"`
	WakeAt time.Time `bson:"wakeAt"`
}

// findInFlight reads the runs in flight.
func (c *cluster) findInFlight(ctx context.Context) ([]runInFlight, error) {
	var left []runInFlight
	if c.runsDB == "" {
		cur, err := c.db.Collection("live").Find(ctx, bson.M{})
		if err != nil {
			return nil, err
		}
		err = cur.All(ctx, &left)
		return left, err
	}
	db, err := c.sqlite()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id, coalesce(owner, ''), phase, wake_at FROM runs WHERE live = 1`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var r runInFlight
		var wake sql.NullInt64
		if err := rows.Scan(&r.ID, &r.Owner, &r.Phase, &wake); err != nil {
			return nil, err
		}
		if wake.Valid {
			r.WakeAt = time.Unix(0, wake.Int64).UTC()
		}
		left = append(left, r)
	}
	return left, rows.Err()
}

// findLocks reads the locks held or waited for, each as text.
func (c *cluster) findLocks(ctx context.Context) ([]string, error) {
	var out []string
	if c.runsDB == "" {
		cur, err := c.db.Collection("locks").Find(ctx, bson.M{})
		if err != nil {
			return nil, err
		}
		var docs []bson.M
		if err := cur.All(ctx, &docs); err != nil {
			return nil, err
		}
		for _, d := range docs {
			out = append(out, fmt.Sprint(d))
		}
		return out, nil
	}
	db, err := c.sqlite()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT team, key, version, doc FROM locks ORDER BY team, key`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var team, key, doc string
		var version int64
		if err := rows.Scan(&team, &key, &version, &doc); err != nil {
			return nil, err
		}
		out = append(out, fmt.Sprintf("%s/%s@%d %s", team, key, version, doc))
	}
	return out, rows.Err()
}
