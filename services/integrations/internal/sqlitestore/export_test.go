package sqlitestore

import (
	"context"
	"time"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQuery is a statement with arguments of the right kinds.
type HotQuery struct {
	Query string
	Args  []any
}

// HotQueries are the statements of the service's paths: every request of the chat app,
// every code-host delivery, every inbound event, every status event recorded and
// delivered, and the sweeps and purges that run while records pile up.
func HotQueries() map[string]HotQuery {
	type q = HotQuery
	now := time.Now().UnixMilli()
	out := map[string]q{
		"a chat signature":            {qFirstSignature, []any{"v0=x", now}},
		"any chat install":            {qAnyInstall, nil},
		"a chat install":              {qFindInstall, []any{"T1"}},
		"save a chat install":         {qSaveInstall, []any{"T1", []byte("{}")}},
		"a chat link":                 {qFindLink, []any{"T1", "U1"}},
		"save a chat link":            {qSaveLink, []any{"T1", "U1", []byte("{}")}},
		"a run's channel":             {qFindRunChannel, []any{"run"}},
		"save a run's channel":        {qSaveRunChannel, []any{"run", "T1", "C1", now}},
		"a team's channel":            {qFindTeamChannel, []any{"ops"}},
		"set a team's channel":        {qSetTeamChannel, []any{"ops", "T1", "C1"}},
		"drop a team's channel":       {qDropTeamChannel, []any{"ops"}},
		"posted":                      {qPosted, []any{"k"}},
		"mark posted":                 {qMarkPosted, []any{"k", now}},
		"save an action's message":    {qSaveMessage, []any{"a1", "T1", "C1", now, []byte("{}")}},
		"keep an action's messages":   {qKeepMessages, []any{now, "a1"}},
		"an action's messages":        {qFindMessages, []any{"a1"}},
		"an installation":             {qFindInstallation, []any{7}},
		"a team's installations":      {qTeamInstallations, []any{"ops"}},
		"update an installation":      {qUpdateInstallation, []any{"ops", "u1", now, now, 2, []byte("{}"), 7, 1}},
		"unlink a team":               {qUnlinkTeam, []any{"ops"}},
		"a code-host delivery":        {qFindDelivery, []any{"d1"}},
		"record a code-host delivery": {qCreateDelivery, []any{"d1", now, []byte("{}"), now}},
		"purge code-host deliveries":  {qPurgeDeliveries, []any{now}},
		"an event's receipt":          {qFindReceipt, []any{"event:k"}},
		"record an event's receipt":   {qCreateReceipt, []any{"event:k", "ops", "build", "r1", now, []byte("{}"), now}},
		"purge receipts":              {qPurgeReceipts, []any{now}},
		"a queue":                     {qFindQueue, []any{"q"}},
		"record in a queue":           {qRecord, []any{2, "[]", 3, "q", 2}},
		"record in a queue, held":     {qRecordHeld, []any{2, "[]", 3, "$.s2", "{}", "q", 2}},
		"store an event apart":        {qPutEvent, []any{"q/g/1", "q", "e", []byte("{}"), now}},
		"an event apart":              {qFindEvent, []any{"q/g/1"}},
		"delete an event apart":       {qDeleteEvent, []any{"q/g/1"}},
		"claim a queue":               {qClaim, []any{"a", now, "q", "a", now}},
		"advance a queue":             {qAdvance, []any{"$.s1", now, now, "q", "a", 1}},
		"postpone a queue":            {qPostpone, []any{1, now, "x", now, "q", "a"}},
		"delete a queue":              {qDeleteQueue, []any{"q", "a", 1}},
		"drop a queue":                {qDropQueue, []any{"q", "a"}},
		"drop a queue's events":       {qDropEvents, []any{"q"}},
		"release a replica's queues":  {qRelease, []any{"a"}},
		"the queues due and free":     {qDue, []any{now, "a", now, 100}},
		"keep a failure":              {qAddFailure, []any{"q/g/1", "s", "run", "e", []byte("{}"), 3, "x", now, now}},
		"a run's failures":            {qFindFailures, []any{"run"}},
		"purge failures":              {qPurgeFailed, []any{now}},
		"purge stale events":          {qPurgeStale, []any{now}},
	}
	for _, table := range chatExpiring {
		out["sweep "+table] = q{sweepQuery(table), []any{now}}
	}
	return out
}

// QueryAnyInstall is the one statement that reads a table by no index: its first row.
const QueryAnyInstall = qAnyInstall
