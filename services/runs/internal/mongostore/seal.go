package mongostore

import (
	"encoding/json"

	"github.com/baton-flow/baton/services/runs/internal/atrest"
	"github.com/baton-flow/baton/services/runs/internal/domain"
)

// Sealer seals values for storage and opens them again (see atrest: what a run holds from
// a secret is stored sealed, never in clear).
type Sealer = atrest.Sealer

// The sealing at rest every store of the service shares (atrest), by the names this
// package's documents use.
func seal(box Sealer, s string) string { return atrest.Seal(box, s) }
func open(box Sealer, s string) string { return atrest.Open(box, s) }
func sealValues(box Sealer, m map[string]any, secret []string) map[string]any {
	return atrest.SealValues(box, m, secret)
}
func openValues(box Sealer, m map[string]any, secret []string) map[string]any {
	return atrest.OpenValues(box, m, secret)
}
func sealTexts(box Sealer, m map[string]string, secret []string) map[string]string {
	return atrest.SealTexts(box, m, secret)
}
func openTexts(box Sealer, m map[string]string, secret []string) map[string]string {
	return atrest.OpenTexts(box, m, secret)
}
func sealContext(box Sealer, rc domain.RunContext) domain.RunContext {
	return atrest.SealContext(box, rc)
}
func openContext(box Sealer, rc domain.RunContext) domain.RunContext {
	return atrest.OpenContext(box, rc)
}
func withoutSecrets(def *domain.Definition) *domain.Definition { return atrest.WithoutSecrets(def) }
func sealTaskSecrets(box Sealer, def *domain.Definition) (*domain.Definition, bool) {
	return atrest.SealTaskSecrets(box, def)
}
func openTaskSecrets(box Sealer, def *domain.Definition)      { atrest.OpenTaskSecrets(box, def) }
func sealRaw(box Sealer, raw json.RawMessage) json.RawMessage { return atrest.SealRaw(box, raw) }
func sealForm(box Sealer, form []domain.Param) []domain.Param { return atrest.SealForm(box, form) }
func openForm(box Sealer, form []domain.Param) []domain.Param { return atrest.OpenForm(box, form) }
