package standalone

import (
	"context"
	"fmt"

	"github.com/baton-flow/baton/libs/mongox"
	"github.com/baton-flow/baton/services/runs"
)

// recountRunsSlots writes the runs service's concurrency slots in the embedded MongoDB
// again from its runs in flight, before the service starts: a data directory that keeps
// runs there was made by a version whose runs service, the database's only writer, kept
// them in memory, and the service now keeps them in the database as it does on a shared
// MongoDB.
func recountRunsSlots(ctx context.Context, uri, dbPrefix string) error {
	client, err := mongox.Connect(ctx, uri)
	if err != nil {
		return err
	}
	defer func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }()
	if _, err := runs.RecountSlots(ctx, client.Database(dbPrefix+runs.Name)); err != nil {
		return fmt.Errorf("runs' concurrency slots: %w", err)
	}
	return nil
}
