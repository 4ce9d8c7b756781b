package killtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/runsapi"
	"github.com/baton-flow/baton/services/schedules"
)

// runLife is how long a stand-in run goes on before it completes by itself: longer than a
// second, so that the cancelOther schedules firing every second find their previous run
// going and cancel it.
const runLife = 1500 * time.Millisecond

// submitLag bounds how long the stand-in takes over a submit, at random: a replica killed
// at a random moment then often has a submit in flight.
const submitLag = 100 * time.Millisecond

// runsStandIn serves the runs service's internal contract (runsapi) to the replicas, as
// the runs service does for what schedules use of it: one run per idempotency key, the
// run's state, its cancellation. Each replica calls it under /r/<slot>/<generation>, so it
// knows which process asks, and can kill it at a submit (cluster.take, cluster.spring). It
// records every submit as it came.
type runsStandIn struct {
	c      *cluster
	signer *auth.Signer

	mu      sync.Mutex
	submits []submit
	runs    map[string]*standInRun // by team, workflow and key
	byID    map[string]*standInRun
	cancels int
	// wrong lists requests the real runs service would refuse: the test fails on any.
	wrong []string
}

// submit is one submit as received.
type submit struct {
	key string
	at  time.Time
}

type standInRun struct {
	id        string
	created   time.Time
	cancelled bool
}

func newRunsStandIn(c *cluster, signer *auth.Signer) *runsStandIn {
	return &runsStandIn{c: c, signer: signer, runs: map[string]*standInRun{}, byID: map[string]*standInRun{}}
}

// routes serves the three endpoints the schedules service calls.
func (r *runsStandIn) routes() http.Handler {
	mux := http.NewServeMux()
	const base = "/r/{slot}/{gen}" + runsapi.Prefix
	mux.HandleFunc("POST "+base+"/teams/{team}/workflows/{name}/runs", r.submit)
	mux.HandleFunc("GET "+base+"/runs/{id}", r.state)
	mux.HandleFunc("POST "+base+"/runs/{id}/cancel", r.cancel)
	return mux
}

// caller checks that a request comes signed from the schedules service, noting it as
// wrong otherwise.
func (r *runsStandIn) caller(w http.ResponseWriter, req *http.Request) (slot, gen int, ok bool) {
	p, err := r.signer.Decode(req.Header.Get(auth.HeaderPrincipal), req.Header.Get(auth.HeaderSignature))
	slot, serr := strconv.Atoi(req.PathValue("slot"))
	gen, gerr := strconv.Atoi(req.PathValue("gen"))
	if err != nil || serr != nil || gerr != nil || p.Type != auth.TypeService || p.ID != schedules.Name {
		r.note("%s %s: caller %+v (%v)", req.Method, req.URL.Path, p, err)
		writeError(w, apperr.New(apperr.PermissionDenied, "Only Baton's services may call this."))
		return 0, 0, false
	}
	return slot, gen, true
}

func (r *runsStandIn) submit(w http.ResponseWriter, req *http.Request) {
	slot, gen, ok := r.caller(w, req)
	if !ok {
		return
	}
	var body runsapi.SubmitRun
	err := json.NewDecoder(req.Body).Decode(&body)
	if (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) && r.c.current(slot, gen) == nil {
		return // cut short by its sender's death (another submit's trap, or at random): never received whole
	}
	if err != nil || body.IdempotencyKey == "" || body.Trigger != "schedule" ||
		body.InitiatedBy.Type != "schedule" || req.PathValue("team") != team || req.PathValue("name") != workflow {
		r.note("submit %s: %+v (%v)", req.URL.Path, body, err)
		writeError(w, apperr.New(apperr.WorkflowRunInvalidReq, "Not a schedule's submit."))
		return
	}
	<-time.After(rand.N(submitLag))
	p := r.c.current(slot, gen)
	r.c.seen(phaseSubmit)
	if r.c.take(p, phaseSubmit, false) {
		r.c.spring(p) // killed as it sent the submit: the run is not made
		return
	}
	now := time.Now()
	r.mu.Lock()
	r.submits = append(r.submits, submit{key: body.IdempotencyKey, at: now})
	run, seen := r.runs[body.IdempotencyKey]
	if !seen {
		run = &standInRun{id: fmt.Sprintf("run-%d", len(r.byID)+1), created: now}
		r.runs[body.IdempotencyKey], r.byID[run.id] = run, run
	}
	answer := runsapi.SubmittedRun{RunState: run.state(now), Created: !seen}
	r.mu.Unlock()
	if r.c.take(p, phaseSubmit, true) {
		r.c.spring(p) // killed once the run was made, before it heard so
		return
	}
	writeJSON(w, answer)
}

func (r *runsStandIn) state(w http.ResponseWriter, req *http.Request) {
	if _, _, ok := r.caller(w, req); !ok {
		return
	}
	r.mu.Lock()
	run, ok := r.byID[req.PathValue("id")]
	var st runsapi.RunState
	if ok {
		st = run.state(time.Now())
	}
	r.mu.Unlock()
	if !ok {
		writeError(w, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", req.PathValue("id")))
		return
	}
	writeJSON(w, st)
}

func (r *runsStandIn) cancel(w http.ResponseWriter, req *http.Request) {
	if _, _, ok := r.caller(w, req); !ok {
		return
	}
	r.mu.Lock()
	run, ok := r.byID[req.PathValue("id")]
	var st runsapi.RunState
	if ok {
		if !run.state(time.Now()).Completed() {
			run.cancelled = true
			r.cancels++
		}
		st = run.state(time.Now())
	}
	r.mu.Unlock()
	if !ok {
		writeError(w, apperr.New(apperr.WorkflowRunNotFound, "Workflow run '%s' was not found.", req.PathValue("id")))
		return
	}
	writeJSON(w, st)
}

func (r *runsStandIn) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrong = append(r.wrong, fmt.Sprintf(format, args...))
}

// recorded answers the submits received so far, the cancellations and the wrong requests.
func (r *runsStandIn) recorded() (submits []submit, runs, cancels int, wrong []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]submit(nil), r.submits...), len(r.byID), r.cancels, append([]string(nil), r.wrong...)
}

func (run *standInRun) state(now time.Time) runsapi.RunState {
	switch {
	case run.cancelled:
		return runsapi.RunState{ID: run.id, Status: "cancelled", Phase: "completed"}
	case now.Sub(run.created) >= runLife:
		return runsapi.RunState{ID: run.id, Status: "succeeded", Phase: "completed"}
	}
	return runsapi.RunState{ID: run.id, Status: "running", Phase: "running"}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers err as Baton's services do (API.md §1): its status, reason and message.
func writeError(w http.ResponseWriter, err error) {
	e, _ := apperr.As(err)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.Reason.Kind.HTTPStatus())
	_ = json.NewEncoder(w).Encode(map[string]any{"reason": e.Reason.Name, "message": e.Message})
}
