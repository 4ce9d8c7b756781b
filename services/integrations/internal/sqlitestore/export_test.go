package sqlitestore

import (
	"context"
	"time"

	"github.com/baton-flow/baton/libs/sqlitex/sqlitextest"
)

// Plan answers the query plan of a statement, a line a step.
func (s *Store) Plan(ctx context.Context, query string, args ...any) ([]string, error) {
	return s.db.QueryPlan(ctx, query, args...)
}

// HotQueries are the statements of the service's paths: every request of the chat app,
// every code-host delivery, every inbound event, every status event recorded and
// delivered, and the sweeps and purges that run while records pile up.
func HotQueries() map[string]sqlitextest.Statement {
	type q = sqlitextest.Statement
	now := time.Now().UnixMilli()
	out := map[string]q{
		"a chat signature":            {Query: qFirstSignature, Args: []any{"v0=x", now}},
		"any chat install":            {Query: qAnyInstall, Args: nil},
		"a chat install":              {Query: qFindInstall, Args: []any{"T1"}},
		"save a chat install":         {Query: qSaveInstall, Args: []any{"T1", []byte("{}")}},
		"a chat link":                 {Query: qFindLink, Args: []any{"T1", "U1"}},
		"save a chat link":            {Query: qSaveLink, Args: []any{"T1", "U1", []byte("{}")}},
		"a run's channel":             {Query: qFindRunChannel, Args: []any{"run"}},
		"save a run's channel":        {Query: qSaveRunChannel, Args: []any{"run", "T1", "C1", now}},
		"a team's channel":            {Query: qFindTeamChannel, Args: []any{"ops"}},
		"set a team's channel":        {Query: qSetTeamChannel, Args: []any{"ops", "T1", "C1"}},
		"drop a team's channel":       {Query: qDropTeamChannel, Args: []any{"ops"}},
		"posted":                      {Query: qPosted, Args: []any{"k"}},
		"mark posted":                 {Query: qMarkPosted, Args: []any{"k", now}},
		"save an action's message":    {Query: qSaveMessage, Args: []any{"a1", "T1", "C1", now, []byte("{}")}},
		"keep an action's messages":   {Query: qKeepMessages, Args: []any{now, "a1"}},
		"an action's messages":        {Query: qFindMessages, Args: []any{"a1"}},
		"an installation":             {Query: qFindInstallation, Args: []any{7}},
		"a team's installations":      {Query: qTeamInstallations, Args: []any{"ops"}},
		"update an installation":      {Query: qUpdateInstallation, Args: []any{"ops", "u1", now, now, 2, []byte("{}"), 7, 1}},
		"unlink a team":               {Query: qUnlinkTeam, Args: []any{"ops"}},
		"a code-host delivery":        {Query: qFindDelivery, Args: []any{"d1"}},
		"record a code-host delivery": {Query: qCreateDelivery, Args: []any{"d1", now, []byte("{}"), now}},
		"purge code-host deliveries":  {Query: qPurgeDeliveries, Args: []any{now}},
		"an event's receipt":          {Query: qFindReceipt, Args: []any{"event:k"}},
		"record an event's receipt":   {Query: qCreateReceipt, Args: []any{"event:k", "ops", "build", "r1", now, []byte("{}"), now}},
		"purge receipts":              {Query: qPurgeReceipts, Args: []any{now}},
		"a queue":                     {Query: qFindQueue, Args: []any{"q"}},
		"record in a queue":           {Query: qRecord, Args: []any{2, "[]", 3, "q", 2}},
		"record in a queue, held":     {Query: qRecordHeld, Args: []any{2, "[]", 3, "$.s2", "{}", "q", 2}},
		"store an event apart":        {Query: qPutEvent, Args: []any{"q/g/1", "q", "e", []byte("{}"), now}},
		"an event apart":              {Query: qFindEvent, Args: []any{"q/g/1"}},
		"delete an event apart":       {Query: qDeleteEvent, Args: []any{"q/g/1"}},
		"claim a queue":               {Query: qClaim, Args: []any{"a", now, "q", "a", now}},
		"advance a queue":             {Query: qAdvance, Args: []any{"$.s1", now, now, "q", "a", 1}},
		"postpone a queue":            {Query: qPostpone, Args: []any{1, now, "x", now, "q", "a"}},
		"delete a queue":              {Query: qDeleteQueue, Args: []any{"q", "a", 1}},
		"drop a queue":                {Query: qDropQueue, Args: []any{"q", "a"}},
		"drop a queue's events":       {Query: qDropEvents, Args: []any{"q"}},
		"release a replica's queues":  {Query: qRelease, Args: []any{"a"}},
		"the queues due and free":     {Query: qDue, Args: []any{now, "a", now, 100}},
		"keep a failure":              {Query: qAddFailure, Args: []any{"q/g/1", "s", "run", "e", []byte("{}"), 3, "x", now, now}},
		"a run's failures":            {Query: qFindFailures, Args: []any{"run"}},
		"purge failures":              {Query: qPurgeFailed, Args: []any{now}},
		"purge stale events":          {Query: qPurgeStale, Args: []any{now}},
	}
	for _, table := range chatExpiring {
		out["sweep "+table] = q{Query: sweepQuery(table), Args: []any{now}}
	}
	return out
}
