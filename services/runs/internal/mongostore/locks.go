package mongostore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Locks live in one collection, locks, a document per lock held or waited for: a lock
// left free is removed, so the collection holds what is in use and stays small, and its
// conditional writes on {_id, version} read little even where they read it whole.

// lockDoc is a team's named lock as stored, _id "<team>/<key>" (a team's name holds no
// slash).
//
// A lock removed and taken again starts from a version no earlier record of it had (the
// clock's nanoseconds), not from 1: a writer still holding the old record's version must
// not find it again on the new one and overwrite a holder it never saw.
type lockDoc struct {
	ID       string      `bson:"_id"`
	Team     string      `bson:"team"`
	Key      string      `bson:"key"`
	Holder   waiterDoc   `bson:"holder"`
	Queue    []waiterDoc `bson:"queue"`
	Notified bool        `bson:"notified"`
	Version  int64       `bson:"version"`
}

type waiterDoc struct {
	Run     string    `bson:"run"`
	Task    int       `bson:"task"`
	Attempt int       `bson:"attempt"`
	At      time.Time `bson:"at"`
}

func lockID(team, key string) string { return team + "/" + key }

func toLockDoc(l *domain.Lock) lockDoc {
	d := lockDoc{ID: lockID(l.Team, l.Key), Team: l.Team, Key: l.Key, Holder: waiterDoc(l.Holder),
		Queue: make([]waiterDoc, len(l.Queue)), Notified: l.Notified, Version: l.Version}
	for i, w := range l.Queue {
		d.Queue[i] = waiterDoc(w)
	}
	return d
}

func (d lockDoc) lock() domain.Lock {
	l := domain.Lock{Team: d.Team, Key: d.Key, Holder: d.Holder.waiter(), Notified: d.Notified, Version: d.Version}
	for _, w := range d.Queue {
		l.Queue = append(l.Queue, w.waiter())
	}
	return l
}

func (d waiterDoc) waiter() domain.Waiter {
	return domain.Waiter{Run: d.Run, Task: d.Task, Attempt: d.Attempt, At: utc(d.At)}
}

// UpdateLock applies fn to the lock team/key as stored (a free lock, Version 0, when there
// is no record) and stores the result on the version it was read at, reading again and
// applying fn anew when another writer moved first: an insert for a new record, a replace
// on its version, or a delete on its version when fn leaves the lock free. An error from
// fn stores nothing.
func (s *Store) UpdateLock(ctx context.Context, team, key string, fn func(*domain.Lock) error) (*domain.Lock, error) {
	for tries := 1; ; tries++ {
		l, err := s.findLock(ctx, team, key)
		if err != nil {
			return nil, err
		}
		read := l.Version
		if err := fn(&l); err != nil {
			return nil, err
		}
		l.Team, l.Key = team, key
		err = s.writeLock(ctx, &l, read)
		if err == nil {
			return &l, nil
		}
		if !errors.Is(err, domain.ErrConflict) || tries >= updateTries {
			return nil, err
		}
	}
}

// findLock reads lock team/key; a free lock at Version 0 when there is no record.
func (s *Store) findLock(ctx context.Context, team, key string) (domain.Lock, error) {
	d, err := mongox.FindOne[lockDoc](ctx, s.locks, bson.M{"_id": lockID(team, key)})
	if errors.Is(err, mongox.ErrNotFound) {
		return domain.Lock{Team: team, Key: key}, nil
	}
	if err != nil {
		return domain.Lock{}, fmt.Errorf("read lock %s of %s: %w", key, team, err)
	}
	return d.lock(), nil
}

// writeLock stores l over the record read at version read (0: none), and moves l's
// version as stored: 0 once a free lock is removed.
func (s *Store) writeLock(ctx context.Context, l *domain.Lock, read int64) error {
	id := lockID(l.Team, l.Key)
	conflict := fmt.Errorf("write lock %s of %s: %w", l.Key, l.Team, domain.ErrConflict)
	switch {
	case l.Free() && read == 0:
		l.Version = 0
		return nil
	case l.Free():
		res, err := s.locks.DeleteOne(ctx, bson.M{"_id": id, "version": read})
		if err != nil {
			return fmt.Errorf("remove lock %s of %s: %w", l.Key, l.Team, err)
		}
		if res.DeletedCount == 0 {
			return conflict
		}
		l.Version = 0
		return nil
	case read == 0:
		l.Version = time.Now().UnixNano()
		if _, err := s.locks.InsertOne(ctx, toLockDoc(l)); err != nil {
			if mongox.IsDuplicateKey(err) {
				return conflict
			}
			return fmt.Errorf("insert lock %s of %s: %w", l.Key, l.Team, err)
		}
		return nil
	}
	l.Version = read + 1
	res, err := s.locks.ReplaceOne(ctx, bson.M{"_id": id, "version": read}, toLockDoc(l))
	if err != nil {
		return fmt.Errorf("write lock %s of %s: %w", l.Key, l.Team, err)
	}
	if res.MatchedCount == 0 {
		return conflict
	}
	return nil
}

// findLocks lists the locks filter selects, by team and key.
func (s *Store) findLocks(ctx context.Context, filter bson.M) ([]domain.Lock, error) {
	cur, err := s.locks.Find(ctx, filter)
	if err != nil {
		return nil, err
	}
	var docs []lockDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]domain.Lock, len(docs))
	for i, d := range docs {
		out[i] = d.lock()
	}
	slices.SortFunc(out, func(a, b domain.Lock) int { return cmp.Or(cmp.Compare(a.Team, b.Team), cmp.Compare(a.Key, b.Key)) })
	return out, nil
}

// FindRunLocks lists the locks run holds or waits for, by team and key.
func (s *Store) FindRunLocks(ctx context.Context, run string) ([]domain.Lock, error) {
	out, err := s.findLocks(ctx, bson.M{"$or": bson.A{bson.M{"holder.run": run}, bson.M{"queue.run": run}}})
	if err != nil {
		return nil, fmt.Errorf("locks of run %s: %w", run, err)
	}
	return out, nil
}

// FindUntold lists the locks whose holder has not been told, by team and key.
func (s *Store) FindUntold(ctx context.Context) ([]domain.Lock, error) {
	out, err := s.findLocks(ctx, bson.M{"notified": false})
	if err != nil {
		return nil, fmt.Errorf("untold locks: %w", err)
	}
	return out, nil
}

// DeleteTeamLocks forgets team's locks.
func (s *Store) DeleteTeamLocks(ctx context.Context, team string) error {
	if _, err := s.locks.DeleteMany(ctx, bson.M{"team": team}); err != nil {
		return fmt.Errorf("delete the locks of %s: %w", team, err)
	}
	return nil
}
