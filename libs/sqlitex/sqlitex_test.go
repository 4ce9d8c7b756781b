package sqlitex

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var schema = []string{
	`CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID`,
}

func open(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "test.db"), Options{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	require.NoError(t, db.Migrate(context.Background(), schema))
	return db
}

func insert(id string, n int) func(*Tx) error {
	return func(tx *Tx) error {
		_, err := tx.Exec(`INSERT INTO items (id, n) VALUES (?, ?)`, id, n)
		return err
	}
}

func count(t *testing.T, db *DB, id string) int {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM items WHERE id = ?`, id).Scan(&n))
	return n
}

// holdWriter runs a write that waits until release is closed, and answers once the
// writer is inside it; the writes asked meanwhile queue up for one batch.
func holdWriter(t *testing.T, db *DB) (release func(), done <-chan error) {
	t.Helper()
	inside, gate, out := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		out <- db.Write(context.Background(), func(*Tx) error {
			close(inside)
			<-gate
			return nil
		})
	}()
	<-inside
	return func() { close(gate) }, out
}

// Each function of a batch runs in its own savepoint: one failing, by its own error or a
// statement's, undoes only its own writes and answers its own error; the others commit.
func TestFailingWriteLeavesItsBatchCommitted(t *testing.T) {
	t.Parallel()
	errOwn := errors.New("refused")
	tests := []struct {
		name    string
		fail    func(*Tx) error
		wantErr func(error) bool
	}{
		{"its own error", func(tx *Tx) error {
			if err := insert("bad", 1)(tx); err != nil {
				return err
			}
			return errOwn
		}, func(err error) bool { return errors.Is(err, errOwn) }},
		{"a unique violation", func(tx *Tx) error {
			if err := insert("bad", 1)(tx); err != nil {
				return err
			}
			return insert("seed", 2)(tx)
		}, IsUnique},
		{"a panic", func(tx *Tx) error {
			if err := insert("bad", 1)(tx); err != nil {
				return err
			}
			panic("boom")
		}, func(err error) bool { return err != nil && strings.Contains(err.Error(), "boom") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db := open(t)
			ctx := context.Background()
			require.NoError(t, db.Write(ctx, insert("seed", 0)))
			release, held := holdWriter(t, db)
			before := db.commits.Load()

			const n = 6
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					if i == n/2 {
						errs[i] = db.Write(ctx, tt.fail)
						return
					}
					errs[i] = db.Write(ctx, insert(fmt.Sprintf("ok-%d", i), i))
				})
			}
			require.Eventually(t, func() bool { return len(db.jobs) == n }, 10*time.Second, time.Millisecond,
				"the writes queue behind the one held")
			release()
			wg.Wait()
			require.NoError(t, <-held)

			assert.Equal(t, before+2, db.commits.Load(), "the held write's batch, then one for all the queued")
			for i, err := range errs {
				if i == n/2 {
					assert.True(t, tt.wantErr(err), "the failing write answers its own error: %v", err)
					continue
				}
				assert.NoError(t, err)
				assert.Equal(t, 1, count(t, db, fmt.Sprintf("ok-%d", i)), "kept")
			}
			assert.Zero(t, count(t, db, "bad"), "the failing write's statements are undone")
		})
	}
}

// A write whose caller has gone before it runs is not run.
func TestWriteOfACallerGoneIsNotRun(t *testing.T) {
	t.Parallel()
	db := open(t)
	release, held := holdWriter(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan error, 1)
	go func() { out <- db.Write(ctx, insert("gone", 1)) }()
	require.Eventually(t, func() bool { return len(db.jobs) == 1 }, 10*time.Second, time.Millisecond)
	cancel()
	release()
	require.NoError(t, <-held)
	assert.ErrorIs(t, <-out, context.Canceled)
	assert.Zero(t, count(t, db, "gone"))
}

// Migrations run once each, in order; a file of a later version is refused.
func TestMigrate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := Open(ctx, path, Options{})
	require.NoError(t, err)
	steps := []string{
		`CREATE TABLE a (x INTEGER)`,
		`INSERT INTO a VALUES (1); INSERT INTO a VALUES (2)`,
	}
	require.NoError(t, db.Migrate(ctx, steps[:1]))
	require.NoError(t, db.Migrate(ctx, steps))
	require.NoError(t, db.Migrate(ctx, steps), "nothing left to apply")
	var n, v int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM a`).Scan(&n))
	assert.Equal(t, 2, n, "each migration ran once")
	require.NoError(t, db.QueryRow(ctx, `PRAGMA user_version`).Scan(&v))
	assert.Equal(t, 2, v)
	assert.ErrorContains(t, db.Migrate(ctx, steps[:1]), "schema version 2")
	require.NoError(t, db.Close())
	assert.ErrorIs(t, db.Write(ctx, insert("x", 1)), ErrClosed)
}

// The file is durable as promised: journal_mode=WAL, synchronous=FULL on the writer.
func TestPragmas(t *testing.T) {
	t.Parallel()
	db := open(t)
	var mode string
	var sync int
	require.NoError(t, db.Write(context.Background(), func(tx *Tx) error {
		if err := tx.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
			return err
		}
		return tx.QueryRow(`PRAGMA synchronous`).Scan(&sync)
	}))
	assert.Equal(t, "wal", mode)
	assert.Equal(t, 2, sync, "FULL")
}

const crashChildEnv = "SQLITEX_CRASH_CHILD"

// A process killed (SIGKILL) while writing loses none of the writes it answered: the child
// writes rows from several goroutines and prints each id once its write is answered; the
// parent kills it mid-flight and finds every printed id in the file.
func TestCrashLosesNothingAnswered(t *testing.T) {
	if path := os.Getenv(crashChildEnv); path != "" {
		crashChild(path)
		return
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashLosesNothingAnswered$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	answered := map[string]bool{}
	lines := bufio.NewScanner(out)
	for len(answered) < 2000 && lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "answered "); ok {
			answered[id] = true
		}
	}
	require.NoError(t, cmd.Process.Kill())
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "answered "); ok {
			answered[id] = true // printed before the kill landed
		}
	}
	_ = cmd.Wait()
	require.GreaterOrEqual(t, len(answered), 2000, "the child wrote before it was killed")

	db, err := Open(context.Background(), path, Options{})
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query(context.Background(), `SELECT id FROM items`)
	require.NoError(t, err)
	stored := map[string]bool{}
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		stored[id] = true
	}
	require.NoError(t, rows.Err())
	for id := range answered {
		assert.True(t, stored[id], "write %s was answered, so it must survive", id)
	}
}

// crashChild writes until it is killed.
func crashChild(path string) {
	ctx := context.Background()
	db, err := Open(ctx, path, Options{})
	if err == nil {
		err = db.Migrate(ctx, schema)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := strconv.Itoa(g) + "-" + strconv.Itoa(i)
				if err := db.Write(ctx, insert(id, i)); err != nil {
					fmt.Fprintln(os.Stderr, err)
					os.Exit(2)
				}
				mu.Lock()
				fmt.Println("answered " + id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// BenchmarkConditionalUpdate is a one-row update on a version (2 KB rows), alone and from
// 32 callers at once, each waiting for its answer.
func BenchmarkConditionalUpdate(b *testing.B) {
	for _, callers := range []int{1, 32} {
		b.Run(fmt.Sprintf("callers=%d", callers), func(b *testing.B) {
			db, err := Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), Options{})
			require.NoError(b, err)
			defer db.Close()
			ctx := context.Background()
			require.NoError(b, db.Migrate(ctx, []string{`CREATE TABLE docs (id INTEGER PRIMARY KEY, version INTEGER NOT NULL, doc BLOB)`}))
			doc := make([]byte, 2048)
			require.NoError(b, db.Write(ctx, func(tx *Tx) error {
				for i := range callers {
					if _, err := tx.Exec(`INSERT INTO docs VALUES (?, 0, ?)`, i, doc); err != nil {
						return err
					}
				}
				return nil
			}))
			update := func(id int, version int64) error {
				return db.Write(ctx, func(tx *Tx) error {
					n, err := tx.ExecAffected(`UPDATE docs SET doc = ?, version = version + 1 WHERE id = ? AND version = ?`, doc, id, version)
					if err == nil && n != 1 {
						err = sql.ErrNoRows
					}
					return err
				})
			}
			b.ResetTimer()
			var wg sync.WaitGroup
			per := (b.N + callers - 1) / callers
			for c := range callers {
				wg.Go(func() {
					for v := range per {
						if err := update(c, int64(v)); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(per*callers)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// OpenStore gives the store the database opened, and closes it when the store cannot be
// made; the database answers Ping.
func TestOpenStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "s.db")
	var kept *DB
	_, err := OpenStore(ctx, path, func(db *DB) (*DB, error) {
		kept = db
		return nil, errors.New("no store")
	})
	require.EqualError(t, err, "no store")
	require.Error(t, kept.Ping(ctx), "closed when the store could not be made")

	db, err := OpenStore(ctx, path, func(db *DB) (*DB, error) { return db, db.Migrate(ctx, []string{`CREATE TABLE t (x INTEGER)`}) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.Ping(ctx))
}
