package mongostore

import (
	"github.com/baton-flow/baton/services/tasks/internal/atrest"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
)

// Sealer seals values for storage and opens them again; *secrets.Box (AES-256-GCM under
// BATON_SECRET_KEY) is one. The default and value of a password parameter are stored
// sealed (internal/atrest), and opened on reading.
type Sealer = atrest.Sealer

// encode is the stored body of t: its JSON text with password parameters sealed.
func (s *Tasks) encode(t domain.Task) ([]byte, error) { return atrest.Encode(s.box, t) }

// decode reads a stored body, opening its password parameters.
func (s *Tasks) decode(body string) (domain.Task, error) { return atrest.Decode(s.box, []byte(body)) }
