package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
)

// Statuses of a code-host installation.
const (
	InstallationActive    = "active"
	InstallationSuspended = "suspended"
	InstallationDeleted   = "deleted"
)

// MaxRepositories bounds the repository names kept per installation: the record is for
// people reading the integration's state, and an organisation with more repositories than
// that is listed in part.
const MaxRepositories = 1000

// MaxEvents bounds the event names kept of an installation (the code host has under a
// hundred kinds).
const MaxEvents = 200

// Errors of the code host's records.
var (
	// ErrInstallationNotFound: no record of the installation.
	ErrInstallationNotFound = apperr.New(apperr.IntegrationNotLinked, "The code-host installation is not known.")
	// ErrDeliveryExists: a delivery of that id is recorded already.
	ErrDeliveryExists = errors.New("delivery recorded already")
)

// Installation is what Baton knows of one installation of the code-host app: from the
// verified deliveries of its installation events (Known), and the team it is linked to.
type Installation struct {
	ID           int64
	AccountLogin string
	AccountType  string
	// Repositories are the full names of the repositories the installation reaches, as
	// its events listed them (at most MaxRepositories).
	Repositories []string
	// Events are the names of the events the code host sends for the installation, as its
	// installation events listed them (at most MaxEvents).
	Events []string
	Status string
	// Known says a verified delivery of the code host named the installation; a landing
	// of the install flow may link one whose first delivery has not come yet.
	Known bool
	// CreatedAt is when the code host says the installation was made.
	CreatedAt time.Time
	Team      string
	LinkedBy  string
	LinkedAt  time.Time
	// LinkIssued is when the install flow that linked the installation started (its
	// state's issue time); zero for a link made by the link endpoint.
	LinkIssued time.Time
	Updated    time.Time
	// Version counts the record's writes, for conditional updates.
	Version int64
}

// Runnable reports whether deliveries of the installation start the linked team's
// workflows: it is linked, known from the code host and neither suspended nor deleted.
func (in Installation) Runnable() bool {
	return in.Team != "" && in.Known && in.Status == InstallationActive
}

// Provable reports whether the installation may be linked by the link endpoint: a
// verified delivery named it and it is neither suspended nor deleted.
func (in Installation) Provable() bool { return in.Known && in.Status == InstallationActive }

// linkSkew is how much earlier than the install flow's start an installation may say it
// was made and still count as made in that flow: the two clocks differ.
const linkSkew = 5 * time.Minute

// MadeInFlow reports whether the installation may have been made in an install flow
// started at issued: its creation is unknown yet, or not before the flow started.
func (in Installation) MadeInFlow(issued time.Time) bool {
	return in.CreatedAt.IsZero() || !in.CreatedAt.Before(issued.Add(-linkSkew))
}

// Unlink removes the installation's link to its team.
func (in *Installation) Unlink() {
	in.Team, in.LinkedBy, in.LinkedAt, in.LinkIssued = "", "", time.Time{}, time.Time{}
}

// InstallationEvent is what an `installation` or `installation_repositories` delivery
// says of its installation.
type InstallationEvent struct {
	Action       string `json:"action"`
	Installation struct {
		ID      int64 `json:"id"`
		Account struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"account"`
		CreatedAt codeHostTime `json:"created_at"`
		Events    []string     `json:"events"`
	} `json:"installation"`
	Repositories        []repository `json:"repositories"`
	RepositoriesAdded   []repository `json:"repositories_added"`
	RepositoriesRemoved []repository `json:"repositories_removed"`
}

type repository struct {
	FullName string `json:"full_name"`
}

// codeHostTime reads the code host's times: epoch seconds in some payloads, RFC 3339 in
// others.
type codeHostTime struct{ time.Time }

func (t *codeHostTime) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		t.Time = time.Unix(n, 0).UTC()
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}

// Installation events the code host sends (the `installation` event's actions).
const (
	ActionCreated                = "created"
	ActionDeleted                = "deleted"
	ActionSuspend                = "suspend"
	ActionUnsuspend              = "unsuspend"
	ActionNewPermissionsAccepted = "new_permissions_accepted"
	ActionAdded                  = "added"
	ActionRemoved                = "removed"
)

// Apply records a verified installation event (event `installation` or
// `installation_repositories`) on the installation. A deleted installation loses its link;
// a link made by an install flow that started after the installation was made is dropped
// when its creation becomes known, since that flow did not make it.
func (in *Installation) Apply(event string, e InstallationEvent, now time.Time) {
	in.Known = true
	in.Updated = now
	if in.Status == "" {
		in.Status = InstallationActive
	}
	if e.Installation.Account.Login != "" {
		in.AccountLogin, in.AccountType = e.Installation.Account.Login, e.Installation.Account.Type
	}
	if !e.Installation.CreatedAt.IsZero() {
		in.CreatedAt = e.Installation.CreatedAt.Time
	}
	if e.Installation.Events != nil {
		in.Events = slices.Clone(e.Installation.Events[:min(len(e.Installation.Events), MaxEvents)])
	}
	if event == "installation_repositories" {
		in.addRepositories(e.RepositoriesAdded)
		in.removeRepositories(e.RepositoriesRemoved)
		return
	}
	switch e.Action {
	case ActionCreated:
		in.Status = InstallationActive
		in.Repositories = nil
		in.addRepositories(e.Repositories)
	case ActionDeleted:
		in.Status = InstallationDeleted
		in.Unlink()
	case ActionSuspend:
		in.Status = InstallationSuspended
	case ActionUnsuspend:
		in.Status = InstallationActive
	}
	if in.Team != "" && !in.LinkIssued.IsZero() && !in.MadeInFlow(in.LinkIssued) {
		in.Unlink()
	}
}

func (in *Installation) addRepositories(repos []repository) {
	for _, r := range repos {
		if len(in.Repositories) >= MaxRepositories {
			return
		}
		if r.FullName != "" && !slices.Contains(in.Repositories, r.FullName) {
			in.Repositories = append(in.Repositories, r.FullName)
		}
	}
}

func (in *Installation) removeRepositories(repos []repository) {
	for _, r := range repos {
		for i, name := range in.Repositories {
			if name == r.FullName {
				in.Repositories = append(in.Repositories[:i], in.Repositories[i+1:]...)
				break
			}
		}
	}
}

// Delivery is the record of a handled code-host delivery, kept DeliveryTTL: a delivery of
// the same id is answered from it and runs nothing new.
type Delivery struct {
	ID           string
	Event        string
	Installation int64
	Received     time.Time
	// Runs are the runs the delivery started, by the idempotency key that names each.
	Runs []DeliveryRun
	// Refused are the workflows whose runs the runs service refused.
	Refused []Refusal
}

// DeliveryRun names one run a delivery started.
type DeliveryRun struct {
	Team     string
	Workflow string
	Key      string
}

// Refusal is a run the runs service would not start for a delivery, and why.
type Refusal struct {
	Team     string `json:"team"`
	Workflow string `json:"workflow"`
	Status   int    `json:"status"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

// DeliveryTTL is how long a delivery's record answers its replays: the runs service keeps
// idempotency keys as long, so a replay can never start a second run.
const DeliveryTTL = 24 * time.Hour

// MaxDeliveryID bounds a delivery id's length.
const MaxDeliveryID = 128

// RunKey is the idempotency key of the run a delivery starts of a workflow: a delivery
// retried, or handled twice at once, starts one run.
func RunKey(delivery, workflow string) string { return "codehost:" + delivery + ":" + workflow }

// SignaturePrefix starts the code host's signature header value.
const SignaturePrefix = "sha256="

// VerifySignature checks header, the code host's `sha256=<hex HMAC-SHA256>` of body with
// secret, in constant time. A missing, malformed or wrong signature is
// INTEGRATION_INVALID_SIGNATURE; the messages never hint at the expected value.
func VerifySignature(secret string, body []byte, header string) error {
	if header == "" {
		return apperr.New(apperr.IntegrationInvalidSignature, "The delivery is not signed: X-Host-Signature-256 (or X-Hub-Signature-256) is required.")
	}
	hexSig, ok := strings.CutPrefix(header, SignaturePrefix)
	got, err := hex.DecodeString(hexSig)
	if !ok || err != nil || len(got) != sha256.Size {
		return apperr.New(apperr.IntegrationInvalidSignature, "The delivery's signature is malformed: want sha256=<64 hex digits>.")
	}
	if !hmac.Equal(got, Sign(secret, body)) {
		return apperr.New(apperr.IntegrationInvalidSignature, "The delivery's signature does not match its body.")
	}
	return nil
}

// Sign is the HMAC-SHA256 of body with secret, as the code host signs deliveries.
func Sign(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}

// InstallState is what the code host's install flow carries from its start (the link
// GET /integration answers) to its landing: the team to link and the user who started it.
type InstallState struct {
	Team    string    `json:"t"`
	User    string    `json:"u"`
	Issued  time.Time `json:"i"`
	Expires time.Time `json:"e"`
}

// StateTTL is how long an install flow's state is accepted.
const StateTTL = time.Hour

// CodeHostStateKey derives the key that signs the code host's install states from the
// service's secret key, under the flow's own label (StateKey).
func CodeHostStateKey(secretKey []byte) []byte { return StateKey(secretKey, "codehost install") }

// SignInstallState signs s with key (SignState), to expire at s.Expires.
func SignInstallState(key []byte, s InstallState) string {
	raw, _ := json.Marshal(s) // plain strings and times always encode
	return SignState(key, string(raw), s.Expires)
}

// MaxStateLen bounds an install state's length: states this service signs are far shorter.
const MaxStateLen = 1024

// OpenState verifies raw, signed with key, and returns its state if it has not expired by
// now. Anything else is INTEGRATION_INVALID_SIGNATURE.
func OpenState(key []byte, raw string, now time.Time) (InstallState, error) {
	invalid := apperr.New(apperr.IntegrationInvalidSignature, "The install flow's state is missing, forged or expired: start the install again from GET /api/v2/integration.")
	if len(raw) > MaxStateLen {
		return InstallState{}, invalid
	}
	payload, err := VerifyState(key, raw, now)
	if err != nil {
		return InstallState{}, invalid
	}
	var s InstallState
	if err := json.Unmarshal([]byte(payload), &s); err != nil || s.Team == "" || !now.Before(s.Expires) {
		return InstallState{}, invalid
	}
	return s, nil
}

// ParseInstallationID reads an installation id: a positive integer, given as a JSON number
// or a string of digits (v4 clients sent a number; query strings carry text).
func ParseInstallationID(v any) (int64, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case float64:
		if v != float64(int64(v)) {
			return 0, false
		}
		s = strconv.FormatInt(int64(v), 10)
	case string:
		s = strings.TrimSpace(v)
	default:
		return 0, false
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, false
	}
	return id, true
}
