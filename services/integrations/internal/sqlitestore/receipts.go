package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// Receipts is app.Receipts in the file: one row per event (by its workflow, source and
// id) or webhook (by its idempotency key) that started a run, with the run as first
// answered as its JSON. A record past its life is ignored when read, and Purge removes
// it by the created index.
type Receipts struct {
	db *sqlitex.DB
}

var _ app.Receipts = (*Receipts)(nil)

// The receipts' statements; checked by index in plan_test.go.
const (
	qFindReceipt = `SELECT team, workflow, created, run FROM event_receipts WHERE key = ?`
	// qCreateReceipt inserts a record, or replaces one made before a time: a twin's, made
	// since, is kept.
	qCreateReceipt = `INSERT INTO event_receipts (key, team, workflow, run_id, created, run) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET team = excluded.team, workflow = excluded.workflow, run_id = excluded.run_id,
			created = excluded.created, run = excluded.run
		WHERE event_receipts.created < ?`
	qPurgeReceipts = `DELETE FROM event_receipts WHERE created < ?`
)

// FindReceipt answers the record of key made at or after since.
func (s *Receipts) FindReceipt(ctx context.Context, key string, since time.Time) (app.Receipt, bool, error) {
	d := app.Receipt{Key: key}
	var created int64
	var run []byte
	err := s.db.QueryRow(ctx, qFindReceipt, key).Scan(&d.Team, &d.Workflow, &created, &run)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return app.Receipt{}, false, nil
	case err != nil:
		return app.Receipt{}, false, fmt.Errorf("read delivery %s: %w", key, err)
	case created < ms(since):
		return app.Receipt{}, false, nil
	}
	d.Created = fromMS(created)
	d.Run = &events.WorkflowRun{}
	if err := json.Unmarshal(run, d.Run); err != nil {
		return app.Receipt{}, false, fmt.Errorf("read delivery %s: its run: %w", key, err)
	}
	return d, true, nil
}

// CreateReceipt stores d, keeping a record of its key made at or after since and
// replacing an older one, in one statement.
func (s *Receipts) CreateReceipt(ctx context.Context, d app.Receipt, since time.Time) error {
	run, err := json.Marshal(d.Run)
	if err != nil {
		return fmt.Errorf("record delivery %s: %w", d.Key, err)
	}
	var runID string
	if d.Run != nil {
		runID = d.Run.ID
	}
	if _, err := execOn(ctx, s.db, qCreateReceipt, d.Key, d.Team, d.Workflow, runID, ms(d.Created), run, ms(since)); err != nil {
		return fmt.Errorf("record delivery %s: %w", d.Key, err)
	}
	return nil
}

// Purge removes the records made before since.
func (s *Receipts) Purge(ctx context.Context, since time.Time) error {
	if _, err := execOn(ctx, s.db, qPurgeReceipts, ms(since)); err != nil {
		return fmt.Errorf("purge event receipts: %w", err)
	}
	return nil
}
