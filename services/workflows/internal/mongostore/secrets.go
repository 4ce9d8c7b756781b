package mongostore

import (
	"github.com/baton-flow/baton/services/workflows/internal/atrest"
	"github.com/baton-flow/baton/services/workflows/internal/domain"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one. What is sealed, and how, is package atrest's, shared with the
// SQLite store.
type Sealer = atrest.Sealer

func sealParams(box Sealer, params []domain.Param) ([]domain.Param, error) {
	return atrest.SealParams(box, params)
}

func openParams(box Sealer, params []domain.Param) { atrest.OpenParams(box, params) }

func sealTaskSecrets(box Sealer, tasks []domain.Task) ([]domain.Task, error) {
	return atrest.SealTaskSecrets(box, tasks)
}

func openTaskSecrets(box Sealer, tasks []domain.Task) []domain.Task {
	return atrest.OpenTaskSecrets(box, tasks)
}
