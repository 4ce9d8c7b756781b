package engine

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/tasktype"
	"github.com/baton-flow/baton/services/runs/internal/domain"
	"github.com/baton-flow/baton/services/runs/internal/view"
)

// The messages a step owes: status events of the run and its task runs (API.md §7), and
// the dispatch of task attempts to runners.

// runEvent is the status event of the run's current status (API.md §7). Its id names the
// run, status and phase, so a re-publish after a takeover is dropped as a duplicate.
func runEvent(st *domain.State, now time.Time) (Message, error) {
	r := st.Run
	v := view.OfRun(r, nil, now)
	id := r.ID + "/" + string(r.Status) + "/" + string(r.Phase)
	ev, err := events.New(id, events.Source("runs"), events.TypeStatusWorkflowRun,
		"/workflowrun/"+r.ID+"/status/"+string(r.Status), v)
	if err != nil {
		return Message{}, fmt.Errorf("status event of run %s: %w", r.ID, err)
	}
	return Message{Topic: events.RunEvents, Key: r.ID, Event: ev}, nil
}

func taskEvent(st *domain.State, t *domain.TaskRun, now time.Time) (Message, error) {
	v := view.OfTask(st.Run, t, now)
	id := t.ID + "/" + strconv.Itoa(t.Attempt) + "/" + string(t.Status)
	ev, err := events.New(id, events.Source("runs"), events.TypeStatusTaskRun,
		"/workflowrun/"+t.RunID+"/taskrun/"+t.ID+"/status/"+string(t.Status), v)
	if err != nil {
		return Message{}, fmt.Errorf("status event of task run %s: %w", t.ID, err)
	}
	return Message{Topic: events.RunEvents, Key: t.RunID, Event: ev}, nil
}

// dispatch is the dispatch of task i's current attempt.
func dispatch(st *domain.State, i int, now time.Time, box Sealer) (Message, error) {
	a, err := attemptOf(st, i, now)
	if err != nil {
		return Message{}, err
	}
	t := st.Tasks[i]
	topic := events.TaskDispatch
	if t.Type == tasktype.Generic {
		topic = events.QueueTopic(a.Queue)
	}
	// An attempt that carries anything from a secret crosses the broker sealed.
	if len(a.Secrets) > 0 || len(t.SecretParams) > 0 {
		if box == nil {
			return Message{}, fmt.Errorf("task run %s carries secrets and the runs service has no secret key", t.ID)
		}
		if err := a.Seal(box); err != nil {
			return Message{}, err
		}
	}
	ev, err := events.New(t.ID+"/"+strconv.Itoa(t.Attempt), events.Source("runs"), events.TypeTaskDispatch, "", a)
	if err != nil {
		return Message{}, err
	}
	return Message{Topic: topic, Key: st.Run.ID, Event: ev}, nil
}

// WorkerAttempt is task i's current attempt as its worker gets it over HTTP: as
// dispatched, never sealed (the worker is a principal allowed to work its queue, and the
// answer goes to it alone).
func WorkerAttempt(st *domain.State, i int, now time.Time) (events.TaskAttempt, error) {
	return attemptOf(st, i, now)
}

// attemptOf is task i's current attempt, in clear.
func attemptOf(st *domain.State, i int, now time.Time) (events.TaskAttempt, error) {
	m := domain.NewMachine(st, now)
	step, err := m.Step(i)
	if err != nil {
		return events.TaskAttempt{}, err
	}
	t := st.Tasks[i]
	r := st.Run
	a := events.TaskAttempt{
		TaskRunID: t.ID, RunID: r.ID, Team: r.Team, Workflow: r.Workflow, Name: t.Name, Type: t.Type,
		Attempt: t.Attempt, Deadline: t.Deadline, Results: step.Results, Secrets: st.SecretValues(),
		Spec: events.TaskSpec{Image: step.Image, Command: step.Command, Args: step.Args, Script: step.Script,
			Shell: step.Shell, WorkingDir: step.WorkingDir},
	}
	// Every secret the run knows of is masked in the log and kept out of the results, those
	// its tasks' results carry included; a value given to a catalogue task's password
	// parameter too.
	if spec := st.G.Tasks[i].Spec; spec != nil {
		for _, p := range spec.Params {
			if s := domain.Text(t.Params[p.Name]); p.Type == "password" && s != "" && !slices.Contains(a.Secrets, s) {
				a.Secrets = append(slices.Clip(a.Secrets), s)
			}
		}
	}
	for _, env := range step.Env {
		a.Spec.Env = append(a.Spec.Env, events.EnvVar{Name: env.Name, Value: env.Value})
	}
	if t.Type == tasktype.Generic {
		a.Queue, a.Params = step.Queue, step.Params
	}
	if t.Type == tasktype.Generic && len(t.SecretParams) == 0 {
		// A queue's worker is given no secret, so it needs none of them to mask.
		a.Secrets = nil
	}
	return a, nil
}
