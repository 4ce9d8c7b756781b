package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Statements of the hot paths, named for the test that checks each goes by an index.
const (
	qSlotHeld   = `SELECT 1 FROM slots WHERE team = ? AND run = ?`
	qSlotsTaken = `SELECT count(*) FROM slots WHERE team = ?`
	qHeartbeat  = `SELECT attempt, runner, at FROM heartbeats WHERE task_run = ?`
)

// write runs fn in a write of its own and wraps its error with what.
func (s *Store) write(ctx context.Context, what string, fn func(*sqlitex.Tx) error) error {
	if err := s.db.Write(ctx, fn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// exists reports whether query answers a row.
func exists(tx *sqlitex.Tx, query string, args ...any) (bool, error) {
	var one int
	err := tx.QueryRow(query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// AcquireSlot gives run one of team's max concurrency slots; false when all are taken.
// Holding a slot is membership of a set: acquiring twice holds one.
func (s *Store) AcquireSlot(ctx context.Context, team, run string, max int) (bool, error) {
	var ok bool
	err := s.write(ctx, "acquire a slot of "+team, func(tx *sqlitex.Tx) error {
		held, err := exists(tx, qSlotHeld, team, run)
		if err != nil || held {
			ok = held
			return err
		}
		var n int
		if err := tx.QueryRow(qSlotsTaken, team).Scan(&n); err != nil {
			return err
		}
		if ok = n < max; !ok {
			return nil
		}
		_, err = tx.Exec(`INSERT INTO slots (team, run) VALUES (?, ?)`, team, run)
		return err
	})
	return ok, err
}

// ReleaseSlot frees run's slot, if it holds one.
func (s *Store) ReleaseSlot(ctx context.Context, team, run string) error {
	return s.write(ctx, "release a slot of "+team, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM slots WHERE team = ? AND run = ?`, team, run)
		return err
	})
}

// SlotsTaken reads how many of team's slots are held.
func (s *Store) SlotsTaken(ctx context.Context, team string) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, qSlotsTaken, team).Scan(&n); err != nil {
		return 0, fmt.Errorf("slots of %s: %w", team, err)
	}
	return n, nil
}

// CountMonthly counts run against team's month unless max are counted, held until its run
// is stored or its count given back.
func (s *Store) CountMonthly(ctx context.Context, team, month, run string, max int) (bool, error) {
	ok, _, err := s.countMonthly(ctx, team, month, run, max, false)
	return ok, err
}

// CountMonthlyOnce counts run unless its count is held already, which is then taken as
// this one's.
func (s *Store) CountMonthlyOnce(ctx context.Context, team, month, run string, max int) (ok, added bool, err error) {
	return s.countMonthly(ctx, team, month, run, max, true)
}

func (s *Store) countMonthly(ctx context.Context, team, month, run string, max int, once bool) (ok, added bool, err error) {
	key := monthKey{team, month}
	stored := s.takeStored(key)
	err = s.write(ctx, "count a run of "+team, func(tx *sqlitex.Tx) error {
		ok, added = false, false
		if err := unhold(tx, key, stored); err != nil {
			return err
		}
		if once {
			held, err := exists(tx, `SELECT 1 FROM monthly_held WHERE team = ? AND month = ? AND run = ?`, team, month, run)
			if err != nil || held {
				ok = held
				return err
			}
		}
		var n int
		err := tx.QueryRow(`SELECT n FROM monthly WHERE team = ? AND month = ?`, team, month).Scan(&n)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if n >= max {
			return nil
		}
		if _, err := tx.Exec(`INSERT INTO monthly (team, month, n) VALUES (?, ?, 1)
			ON CONFLICT (team, month) DO UPDATE SET n = n + 1`, team, month); err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO monthly_held (team, month, run, since) VALUES (?, ?, ?, ?)
			ON CONFLICT (team, month, run) DO UPDATE SET since = excluded.since`, team, month, run, time.Now().UnixNano()); err != nil {
			return err
		}
		ok, added = true, true
		return nil
	})
	if err != nil {
		s.putStored(key, stored)
	}
	return ok, added, err
}

// RunStored notes that run is stored, for the next write of its month's count (or
// SettleMonthly) to unhold: a submit then costs no write of its own for it. Until then
// the count reads as held nowhere else than in HeldMonthly's answer, which leaves it out.
func (s *Store) RunStored(_ context.Context, team, month, run string) error {
	s.putStored(monthKey{team, month}, map[string]bool{run: true})
	return nil
}

// monthKey names a team's month.
type monthKey struct{ team, month string }

// takeStored takes the runs noted stored in key's month.
func (s *Store) takeStored(key monthKey) map[string]bool {
	s.storedMu.Lock()
	defer s.storedMu.Unlock()
	out := s.stored[key]
	delete(s.stored, key)
	return out
}

// putStored notes runs stored in key's month (again, after a write that failed).
func (s *Store) putStored(key monthKey, runs map[string]bool) {
	if len(runs) == 0 {
		return
	}
	s.storedMu.Lock()
	defer s.storedMu.Unlock()
	if s.stored == nil {
		s.stored = map[monthKey]map[string]bool{}
	}
	if s.stored[key] == nil {
		s.stored[key] = map[string]bool{}
	}
	for run := range runs {
		s.stored[key][run] = true
	}
}

// isStored reports whether run is noted stored and not yet unheld.
func (s *Store) isStored(key monthKey, run string) bool {
	s.storedMu.Lock()
	defer s.storedMu.Unlock()
	return s.stored[key][run]
}

// unhold forgets that the counts of runs, stored, are held.
func unhold(tx *sqlitex.Tx, key monthKey, runs map[string]bool) error {
	for run := range runs {
		if _, err := tx.Exec(`DELETE FROM monthly_held WHERE team = ? AND month = ? AND run = ?`, key.team, key.month, run); err != nil {
			return err
		}
	}
	return nil
}

// GiveBackMonthly uncounts run if its count is held; false when it is not.
func (s *Store) GiveBackMonthly(ctx context.Context, team, month, run string) (bool, error) {
	var given bool
	key := monthKey{team, month}
	stored := s.takeStored(key)
	err := s.write(ctx, "give back the count of "+run, func(tx *sqlitex.Tx) error {
		// A run noted stored keeps its count: unheld first, it is not given back.
		if err := unhold(tx, key, stored); err != nil {
			return err
		}
		n, err := tx.ExecAffected(`DELETE FROM monthly_held WHERE team = ? AND month = ? AND run = ?`, team, month, run)
		if err != nil || n == 0 {
			given = false
			return err
		}
		given = true
		_, err = tx.Exec(`UPDATE monthly SET n = n - 1 WHERE team = ? AND month = ? AND n > 0`, team, month)
		return err
	})
	if err != nil {
		s.putStored(key, stored)
	}
	return given, err
}

// HeldMonthly lists the counts held since before before.
func (s *Store) HeldMonthly(ctx context.Context, before time.Time) ([]domain.HeldCount, error) {
	rows, err := s.db.Query(ctx, `SELECT team, month, run, since FROM monthly_held WHERE since < ? ORDER BY since`, before.UnixNano())
	if err != nil {
		return nil, fmt.Errorf("counts held: %w", err)
	}
	defer rows.Close()
	var out []domain.HeldCount
	for rows.Next() {
		var c domain.HeldCount
		var since int64
		if err := rows.Scan(&c.Team, &c.Month, &c.Run, &since); err != nil {
			return nil, fmt.Errorf("counts held: %w", err)
		}
		c.Since = time.Unix(0, since).UTC()
		if s.isStored(monthKey{c.Team, c.Month}, c.Run) {
			continue // stored, its held mark not yet written away
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// SettleMonthly writes what RunStored noted and no count has written yet.
func (s *Store) SettleMonthly(ctx context.Context) error {
	s.storedMu.Lock()
	pending := s.stored
	s.stored = nil
	s.storedMu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	err := s.write(ctx, "unhold the counts of runs stored", func(tx *sqlitex.Tx) error {
		for key, runs := range pending {
			if err := unhold(tx, key, runs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		for key, runs := range pending {
			s.putStored(key, runs)
		}
	}
	return err
}

// Usage reads team's counters for month.
func (s *Store) Usage(ctx context.Context, team, month string) (domain.QuotaUsage, error) {
	var u domain.QuotaUsage
	err := s.db.QueryRow(ctx, `SELECT (SELECT count(*) FROM slots WHERE team = ?),
		coalesce((SELECT n FROM monthly WHERE team = ? AND month = ?), 0)`, team, team, month).Scan(&u.Concurrent, &u.Monthly)
	if err != nil {
		return u, fmt.Errorf("usage of %s: %w", team, err)
	}
	return u, nil
}

// DeleteTeamQuotas forgets team's slots and monthly counts.
func (s *Store) DeleteTeamQuotas(ctx context.Context, team string) error {
	s.storedMu.Lock()
	for key := range s.stored {
		if key.team == team {
			delete(s.stored, key)
		}
	}
	s.storedMu.Unlock()
	return s.write(ctx, "delete the counters of "+team, func(tx *sqlitex.Tx) error {
		for _, q := range []string{`DELETE FROM slots WHERE team = ?`, `DELETE FROM monthly WHERE team = ?`, `DELETE FROM monthly_held WHERE team = ?`} {
			if _, err := tx.Exec(q, team); err != nil {
				return err
			}
		}
		return nil
	})
}

// HoldKey reserves key for run and answers the run that holds it: run, unless the key
// named another within KeyTTL of now.
func (s *Store) HoldKey(ctx context.Context, key, run string, now time.Time) (string, error) {
	holder := run
	err := s.write(ctx, "hold key "+key, func(tx *sqlitex.Tx) error {
		holder = run
		var held string
		var created int64
		err := tx.QueryRow(`SELECT run, created FROM idempotency WHERE key = ?`, key).Scan(&held, &created)
		if err == nil && created >= now.Add(-KeyTTL).UnixNano() {
			holder = held
			return nil
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		_, err = tx.Exec(`INSERT INTO idempotency (key, run, created) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET run = excluded.run, created = excluded.created`, key, run, now.UnixNano())
		return err
	})
	return holder, err
}

// PurgeKeys forgets the keys older than KeyTTL.
func (s *Store) PurgeKeys(ctx context.Context, now time.Time) error {
	return s.write(ctx, "purge keys", func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM idempotency WHERE created < ?`, now.Add(-KeyTTL).UnixNano())
		return err
	})
}

// DeleteTeamKeys forgets team's idempotency keys ("<team>/…").
func (s *Store) DeleteTeamKeys(ctx context.Context, team string) error {
	return s.write(ctx, "delete the keys of "+team, func(tx *sqlitex.Tx) error {
		// '0' follows '/': the range is the keys that start with "<team>/".
		_, err := tx.Exec(`DELETE FROM idempotency WHERE key >= ? AND key < ?`, team+"/", team+"0")
		return err
	})
}

// MarkAlive records that replica was alive at.
func (s *Store) MarkAlive(ctx context.Context, replica string, at time.Time) error {
	return s.write(ctx, "mark "+replica+" alive", func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO replicas (id, at) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET at = excluded.at`, replica, at.UnixNano())
		return err
	})
}

// Replicas answers when each replica was last alive.
func (s *Store) Replicas(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.Query(ctx, `SELECT id, at FROM replicas`)
	if err != nil {
		return nil, fmt.Errorf("replicas: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var at int64
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("replicas: %w", err)
		}
		out[id] = time.Unix(0, at).UTC()
	}
	return out, rows.Err()
}

// ForgetReplica removes a replica.
func (s *Store) ForgetReplica(ctx context.Context, replica string) error {
	return s.write(ctx, "forget "+replica, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM replicas WHERE id = ?`, replica)
		return err
	})
}

// SaveHeartbeat stores the last heartbeat of a task run's attempt, unchecked: a beat
// counts only for the attempt and runner it names.
func (s *Store) SaveHeartbeat(ctx context.Context, taskRunID string, b domain.Heartbeat) error {
	return s.write(ctx, "heartbeat "+taskRunID, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO heartbeats (task_run, attempt, runner, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (task_run) DO UPDATE SET attempt = excluded.attempt, runner = excluded.runner, at = excluded.at`,
			taskRunID, b.Attempt, b.Runner, b.At.UnixNano())
		return err
	})
}

// LastHeartbeat reads the last heartbeat of a task run; false when there is none.
func (s *Store) LastHeartbeat(ctx context.Context, taskRunID string) (domain.Heartbeat, bool, error) {
	var b domain.Heartbeat
	var at int64
	err := s.db.QueryRow(ctx, qHeartbeat, taskRunID).Scan(&b.Attempt, &b.Runner, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return b, false, nil
	}
	if err != nil {
		return b, false, fmt.Errorf("heartbeat of %s: %w", taskRunID, err)
	}
	b.At = time.Unix(0, at).UTC()
	return b, true, nil
}

// PurgeHeartbeats forgets heartbeats older than before.
func (s *Store) PurgeHeartbeats(ctx context.Context, before time.Time) error {
	return s.write(ctx, "purge heartbeats", func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`DELETE FROM heartbeats WHERE at < ?`, before.UnixNano())
		return err
	})
}

// AppendLog stores one chunk of an attempt's log; a chunk stored twice is kept once.
func (s *Store) AppendLog(ctx context.Context, taskRunID string, attempt, seq int, text string) error {
	return s.write(ctx, "append to the log of "+taskRunID, func(tx *sqlitex.Tx) error {
		_, err := tx.Exec(`INSERT INTO logs (task_run, attempt, seq, text) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, taskRunID, attempt, seq, text)
		return err
	})
}

// ReadLog answers the chunks of a log from a cursor on, through attempt attempts, and the
// cursor after them: each attempt's chunks in order up to the first missing, which the
// last attempt may still write.
func (s *Store) ReadLog(ctx context.Context, taskRunID string, attempts int, from domain.LogCursor) (string, domain.LogCursor, error) {
	cur := from
	if cur.Attempt < 1 {
		cur = domain.LogCursor{Attempt: 1}
	}
	rows, err := s.db.Query(ctx, `SELECT attempt, seq, text FROM logs WHERE task_run = ? AND attempt BETWEEN ? AND ?
		AND (attempt > ? OR seq >= ?) ORDER BY attempt, seq`, taskRunID, cur.Attempt, attempts, cur.Attempt, cur.Seq)
	if err != nil {
		return "", from, fmt.Errorf("log of %s: %w", taskRunID, err)
	}
	defer rows.Close()
	type chunk struct {
		attempt, seq int
		text         string
	}
	var chunks []chunk
	for rows.Next() {
		var c chunk
		if err := rows.Scan(&c.attempt, &c.seq, &c.text); err != nil {
			return "", from, fmt.Errorf("log of %s: %w", taskRunID, err)
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return "", from, fmt.Errorf("log of %s: %w", taskRunID, err)
	}
	var b []byte
	for cur.Attempt <= attempts {
		if len(chunks) > 0 && chunks[0].attempt == cur.Attempt && chunks[0].seq == cur.Seq {
			b = append(b, chunks[0].text...)
			chunks = chunks[1:]
			cur.Seq++
			continue
		}
		if cur.Attempt == attempts {
			break // the current attempt may write more
		}
		cur = domain.LogCursor{Attempt: cur.Attempt + 1}
		for len(chunks) > 0 && chunks[0].attempt < cur.Attempt {
			chunks = chunks[1:] // past a gap of an attempt that ended
		}
	}
	return string(b), cur, nil
}
