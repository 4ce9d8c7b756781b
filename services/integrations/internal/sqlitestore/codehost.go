package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/sqlitex"
	"github.com/baton-flow/baton/services/integrations/internal/app"
	"github.com/baton-flow/baton/services/integrations/internal/domain"
)

// CodeHost is app.CodeHostStore in the file: installations by id, with their link as
// columns (the team is indexed: a team's integrations, a deleted team's unlinking), and
// the records of deliveries by delivery id, purged by their receipt. Neither holds
// secrets.
type CodeHost struct {
	db *sqlitex.DB
}

var _ app.CodeHostStore = (*CodeHost)(nil)

// maxUpdateTries bounds the retries of an update that keeps losing to concurrent writers.
const maxUpdateTries = 32

// The code-host app's statements; those of its paths are checked by index in plan_test.go.
const (
	installationColumns = `id, team, linked_by, linked_at, link_issued, version, doc`
	qFindInstallation   = `SELECT ` + installationColumns + ` FROM codehost_installations WHERE id = ?`
	qTeamInstallations  = `SELECT ` + installationColumns + ` FROM codehost_installations WHERE team = ? ORDER BY id`
	qInsertInstallation = `INSERT INTO codehost_installations (team, linked_by, linked_at, link_issued, version, doc, id) VALUES (?, ?, ?, ?, ?, ?, ?)`
	qUpdateInstallation = `UPDATE codehost_installations SET team = ?, linked_by = ?, linked_at = ?, link_issued = ?, version = ?, doc = ?
		WHERE id = ? AND version = ?`
	qUnlinkTeam = `UPDATE codehost_installations SET team = NULL, linked_by = '', linked_at = 0, link_issued = 0, version = version + 1
		WHERE team = ?`
	qFindDelivery = `SELECT received, doc FROM codehost_deliveries WHERE id = ?`
	// qCreateDelivery inserts a delivery's record, or replaces one received before a time.
	qCreateDelivery = `INSERT INTO codehost_deliveries (id, received, doc) VALUES (?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET received = excluded.received, doc = excluded.doc WHERE codehost_deliveries.received < ?`
	qPurgeDeliveries = `DELETE FROM codehost_deliveries WHERE received < ?`
)

// installationDoc is what the doc column holds of an installation: all but its id, link
// and version.
type installationDoc struct {
	AccountLogin string   `json:"accountLogin,omitempty"`
	AccountType  string   `json:"accountType,omitempty"`
	Repositories []string `json:"repositories,omitempty"`
	Events       []string `json:"events,omitempty"`
	Status       string   `json:"status,omitempty"`
	Known        bool     `json:"known,omitempty"`
	CreatedAt    int64    `json:"createdAt,omitempty"`
	Updated      int64    `json:"updated,omitempty"`
}

// installationValues are what a write stores of in, in the order of the statements:
// team, linked_by, linked_at, link_issued, version, doc.
func installationValues(in domain.Installation) ([]any, error) {
	doc, err := json.Marshal(installationDoc{AccountLogin: in.AccountLogin, AccountType: in.AccountType, Repositories: in.Repositories,
		Events: in.Events, Status: in.Status, Known: in.Known, CreatedAt: ms(in.CreatedAt), Updated: ms(in.Updated)})
	if err != nil {
		return nil, fmt.Errorf("encode installation %d: %w", in.ID, err)
	}
	var team any
	if in.Team != "" {
		team = in.Team
	}
	return []any{team, in.LinkedBy, ms(in.LinkedAt), ms(in.LinkIssued), in.Version, doc}, nil
}

// scanInstallation reads a row of installationColumns.
func scanInstallation(sc interface{ Scan(...any) error }) (domain.Installation, error) {
	var in domain.Installation
	var team sql.NullString
	var linkedAt, issued int64
	var doc []byte
	if err := sc.Scan(&in.ID, &team, &in.LinkedBy, &linkedAt, &issued, &in.Version, &doc); err != nil {
		return domain.Installation{}, err
	}
	var d installationDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return domain.Installation{}, fmt.Errorf("decode installation %d: %w", in.ID, err)
	}
	in.Team, in.LinkedAt, in.LinkIssued = team.String, fromMS(linkedAt), fromMS(issued)
	in.AccountLogin, in.AccountType, in.Repositories, in.Events = d.AccountLogin, d.AccountType, d.Repositories, d.Events
	in.Status, in.Known, in.CreatedAt, in.Updated = d.Status, d.Known, fromMS(d.CreatedAt), fromMS(d.Updated)
	return in, nil
}

// FindInstallation fails with domain.ErrInstallationNotFound.
func (s *CodeHost) FindInstallation(ctx context.Context, id int64) (domain.Installation, error) {
	in, err := scanInstallation(s.db.QueryRow(ctx, qFindInstallation, id))
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Installation{}, domain.ErrInstallationNotFound
	}
	if err != nil {
		return domain.Installation{}, fmt.Errorf("read installation %d: %w", id, err)
	}
	return in, nil
}

// FindInstallationsByTeam returns the installations linked to team, by id.
func (s *CodeHost) FindInstallationsByTeam(ctx context.Context, team string) ([]domain.Installation, error) {
	rows, err := s.db.Query(ctx, qTeamInstallations, team)
	if err != nil {
		return nil, fmt.Errorf("read team %s's installations: %w", team, err)
	}
	defer rows.Close()
	out := []domain.Installation{}
	for rows.Next() {
		in, err := scanInstallation(rows)
		if err != nil {
			return nil, fmt.Errorf("read team %s's installations: %w", team, err)
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read team %s's installations: %w", team, err)
	}
	return out, nil
}

// UpdateInstallation loads the installation, or a new one, applies fn and writes it back
// on the condition that its version did not change (an insert, for a new one, on the
// condition that nobody inserted it meanwhile); a lost race is read and tried again.
func (s *CodeHost) UpdateInstallation(ctx context.Context, id int64, fn func(*domain.Installation) error) (domain.Installation, error) {
	for range maxUpdateTries {
		in, err := s.FindInstallation(ctx, id)
		fresh := errors.Is(err, domain.ErrInstallationNotFound)
		switch {
		case fresh:
			in = domain.Installation{ID: id}
		case err != nil:
			return domain.Installation{}, err
		}
		version := in.Version
		if err := fn(&in); err != nil {
			return domain.Installation{}, err
		}
		in.ID, in.Version = id, version+1
		vals, err := installationValues(in)
		if err != nil {
			return domain.Installation{}, err
		}
		var n int64
		if fresh {
			n, err = execOn(ctx, s.db, qInsertInstallation, append(vals, id)...)
			if sqlitex.IsUnique(err) {
				continue
			}
		} else {
			n, err = execOn(ctx, s.db, qUpdateInstallation, append(vals, id, version)...)
		}
		if err != nil {
			return domain.Installation{}, fmt.Errorf("write installation %d: %w", id, err)
		}
		if n == 1 {
			return in, nil
		}
	}
	return domain.Installation{}, apperr.New(apperr.ConcurrentModification, "The code-host installation %d changed while it was being updated; try again.", id)
}

// UnlinkTeam removes every link to team.
func (s *CodeHost) UnlinkTeam(ctx context.Context, team string) error {
	if _, err := execOn(ctx, s.db, qUnlinkTeam, team); err != nil {
		return fmt.Errorf("unlink team %s: %w", team, err)
	}
	return nil
}

// deliveryDoc is what the doc column holds of a delivery's record.
type deliveryDoc struct {
	Event        string           `json:"event"`
	Installation int64            `json:"installation,omitempty"`
	Runs         []deliveryRunDoc `json:"runs,omitempty"`
	Refused      []domain.Refusal `json:"refused,omitempty"`
}

type deliveryRunDoc struct {
	Team     string `json:"team"`
	Workflow string `json:"workflow"`
	Key      string `json:"key"`
}

// FindDelivery returns the record of delivery id, found false when there is none.
func (s *CodeHost) FindDelivery(ctx context.Context, id string) (domain.Delivery, bool, error) {
	var received int64
	var doc []byte
	err := s.db.QueryRow(ctx, qFindDelivery, id).Scan(&received, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return domain.Delivery{}, false, nil
	}
	if err != nil {
		return domain.Delivery{}, false, fmt.Errorf("read delivery %s: %w", id, err)
	}
	var d deliveryDoc
	if err := json.Unmarshal(doc, &d); err != nil {
		return domain.Delivery{}, false, fmt.Errorf("decode delivery %s: %w", id, err)
	}
	out := domain.Delivery{ID: id, Event: d.Event, Installation: d.Installation, Received: fromMS(received), Refused: d.Refused}
	for _, r := range d.Runs {
		out.Runs = append(out.Runs, domain.DeliveryRun(r))
	}
	return out, true, nil
}

// CreateDelivery records a handled delivery in one statement: a record of the same id
// received more than domain.DeliveryTTL before it is replaced, so two late deliveries
// still agree; a newer one is domain.ErrDeliveryExists.
func (s *CodeHost) CreateDelivery(ctx context.Context, d domain.Delivery) error {
	doc := deliveryDoc{Event: d.Event, Installation: d.Installation, Refused: d.Refused}
	for _, r := range d.Runs {
		doc.Runs = append(doc.Runs, deliveryRunDoc(r))
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode delivery %s: %w", d.ID, err)
	}
	n, err := execOn(ctx, s.db, qCreateDelivery, d.ID, ms(d.Received), raw, ms(d.Received.Add(-domain.DeliveryTTL)))
	if err != nil {
		return fmt.Errorf("record delivery %s: %w", d.ID, err)
	}
	if n == 0 {
		return domain.ErrDeliveryExists
	}
	return nil
}

// PurgeDeliveries deletes the records received before before.
func (s *CodeHost) PurgeDeliveries(ctx context.Context, before time.Time) error {
	if _, err := execOn(ctx, s.db, qPurgeDeliveries, ms(before)); err != nil {
		return fmt.Errorf("purge delivery records: %w", err)
	}
	return nil
}
