package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// RunOnce is a runOnce schedule one of Baton's services asks for on behalf of one of its
// principals (a runscheduledworkflow task, for its run's initiator).
type RunOnce struct {
	// Key makes the request idempotent: the team's schedule made under it is answered
	// again, whatever the request says then.
	Key string
	// Schedule holds the workflow, name, description, date, zone, params and labels.
	Schedule domain.Schedule
	// Secret names the params that came from a secret, masked like password params.
	Secret    []string
	CreatedBy domain.Initiator
}

// maxKey bounds a RunOnce's key.
const maxKey = 256

// CreateRunOnce makes the runOnce schedule of team that req asks for, active, or answers the
// one made earlier under req.Key; created reports which. It authorizes nothing: only
// Baton's own services reach it (the route admits no other), and they have decided who may
// ask. The workflow must exist and the date be ahead, as for any new schedule.
func (s *Schedules) CreateRunOnce(ctx context.Context, team string, req RunOnce) (sch *domain.Schedule, created bool, err error) {
	if req.Key == "" || len(req.Key) > maxKey {
		return nil, false, apperr.Invalid(apperr.ScheduleInvalidReq, fmt.Sprintf("key is required, at most %d characters.", maxKey),
			apperr.FieldError{Field: "key", Message: fmt.Sprintf("is required, at most %d characters", maxKey)})
	}
	// The key decides the schedule's id, so the store's unique id makes one schedule per key
	// even for two requests at once, and a request sent again finds it by id alone.
	id := keyedID(team, req.Key)
	if sch, err := s.d.Store.FindSchedule(ctx, team, id); err == nil || !apperr.HasReason(err, apperr.ScheduleNotFound) {
		return sch, false, err
	}
	body := req.Schedule
	body.Type, body.Status, body.Cron = domain.TypeRunOnce, domain.StatusActive, ""
	sch, err = s.create(ctx, team, id, body, req.CreatedBy, req.Secret)
	if errors.Is(err, domain.ErrConflict) {
		// The same key's other request stored it first.
		sch, err = s.d.Store.FindSchedule(ctx, team, id)
		return sch, false, err
	}
	return sch, err == nil, err
}

// keyedID is the id of team's schedule made under key: 24 hex digits, like the ids the
// service makes, of a hash of both.
func keyedID(team, key string) string {
	sum := sha256.Sum256([]byte(team + "\x00" + key))
	return hex.EncodeToString(sum[:12])
}
