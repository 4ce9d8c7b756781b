package executor

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/baton-flow/baton/libs/events"
)

const testNamespace = "steps"

// podLogs is a LogSource whose log is made from the Job's result marker; with hold it
// lasts until its context ends.
type podLogs struct {
	client *fake.Clientset
	log    func(marker string) string
	hold   bool
	// breakAt, when set, breaks the first stream after that many bytes.
	breakAt int

	mu      sync.Mutex
	follows int
}

func (p *podLogs) Follow(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	p.mu.Lock()
	p.follows++
	first := p.follows == 1
	p.mu.Unlock()
	if p.hold {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	po, err := p.client.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	job, err := p.client.BatchV1().Jobs(namespace).Get(ctx, po.Labels[LabelJob], metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if container != stepContainer {
		return nil, io.ErrUnexpectedEOF
	}
	log := p.log(job.Annotations[AnnotationMarker])
	if first && p.breakAt > 0 {
		return io.NopCloser(io.MultiReader(strings.NewReader(log[:p.breakAt]), &brokenReader{})), nil
	}
	return io.NopCloser(strings.NewReader(log)), nil
}

type brokenReader struct{}

func (*brokenReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// newTestKube returns an executor on a fake clientset; log nil follows logs through it.
func newTestKube(t *testing.T, log func(string) string, hold bool, breakAt ...int) (*Kubernetes, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	var logs LogSource
	if log != nil || hold {
		pl := &podLogs{client: client, log: log, hold: hold}
		if len(breakAt) > 0 {
			pl.breakAt = breakAt[0]
		}
		logs = pl
	}
	k, err := NewKubernetes(client, logs, KubernetesOptions{
		Namespace: testNamespace, Owner: "runner-0", ServiceAccount: "steps",
		NodeSelector: map[string]string{"pool": "steps"},
	})
	require.NoError(t, err)
	return k, client
}

// startedJob waits for the attempt's Job to be let go, then starts its Pod.
func startedJob(t *testing.T, client *fake.Clientset, name string) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	require.Eventually(t, func() bool {
		j, err := client.BatchV1().Jobs(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
		job = j
		return err == nil && j.Spec.Suspend != nil && !*j.Spec.Suspend
	}, 10*time.Second, 5*time.Millisecond)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-abcde", Namespace: testNamespace, Labels: job.Spec.Template.Labels},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: stepContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		}}},
	}
	_, err := client.CoreV1().Pods(testNamespace).Create(context.Background(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	return job
}

// endJob ends the Job's Pod with code (none when negative) and the Job with condition.
func endJob(t *testing.T, client *fake.Clientset, name string, code int, cond batchv1.JobCondition) {
	t.Helper()
	ctx := context.Background()
	pods := client.CoreV1().Pods(testNamespace)
	pod, err := pods.Get(ctx, name+"-abcde", metav1.GetOptions{})
	require.NoError(t, err)
	pod.Status.Phase = corev1.PodSucceeded
	if code != 0 {
		pod.Status.Phase = corev1.PodFailed
	}
	if code >= 0 {
		pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: int32(code)}}
	}
	_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	require.NoError(t, err)
	job, err := client.BatchV1().Jobs(testNamespace).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	cond.Status = corev1.ConditionTrue
	job.Status.Conditions = append(job.Status.Conditions, cond)
	_, err = client.BatchV1().Jobs(testNamespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	require.NoError(t, err)
}

func resultLine(marker, name, value string) string {
	enc := base64.StdEncoding.EncodeToString
	return marker + " " + enc([]byte(name)) + " " + enc([]byte(value)) + "\n"
}

func TestKubernetesExecute(t *testing.T) {
	t.Parallel()
	complete := batchv1.JobCondition{Type: batchv1.JobComplete}
	failedCond := batchv1.JobCondition{Type: batchv1.JobFailed, Reason: "BackoffLimitExceeded"}
	tests := []struct {
		name     string
		step     Step
		log      func(marker string) string
		code     int
		cond     batchv1.JobCondition
		breakAt  int
		check    func(t *testing.T, c corev1.Container, pod corev1.PodSpec)
		want     Outcome
		wantLog  string
		deadline bool
	}{
		{
			name: "command with env and secret",
			step: Step{Spec: events.TaskSpec{
				Image: "alpine:3.20", Command: []string{"deploy"}, Args: []string{"--to", "prod"},
				Env: []events.EnvVar{{Name: "TOKEN", Value: "s3cret-value"}, {Name: "MODE", Value: "fast"}}, WorkingDir: "src",
			}},
			log:  func(string) string { return "deploying\ndone\n" },
			cond: complete, want: exitedWith(0), wantLog: "deploying\ndone\n", deadline: true,
			check: func(t *testing.T, c corev1.Container, pod corev1.PodSpec) {
				assert.Equal(t, "alpine:3.20", c.Image)
				assert.Equal(t, []string{"deploy"}, c.Command)
				assert.Equal(t, []string{"--to", "prod"}, c.Args)
				assert.Equal(t, "/workspace/src", c.WorkingDir)
				assert.Equal(t, "steps", pod.ServiceAccountName)
				assert.Equal(t, map[string]string{"pool": "steps"}, pod.NodeSelector)
			},
		},
		{
			name: "script with results, failing",
			step: Step{Results: []string{"version", "digest"}, Spec: events.TaskSpec{
				Image: "alpine:3.20", Script: "echo building\nexit 3",
			}},
			log: func(m string) string {
				return "building\npartial" + resultLine(m, "version", "1.2.3\n") + resultLine(m, "stray", "x")
			},
			code: 3, cond: failedCond, wantLog: "building\npartial",
			want: Outcome{Status: StatusFailed, ExitCode: new(3), Message: "exit code 3", Results: map[string]string{"version": "1.2.3"}},
			check: func(t *testing.T, c corev1.Container, pod corev1.PodSpec) {
				require.Len(t, c.Command, 5)
				assert.Equal(t, []string{"/bin/sh", "-c"}, c.Command[:2])
				assert.Contains(t, c.Command[2], "/workspace/results")
				assert.Equal(t, []string{"/bin/sh", "/baton/script"}, c.Args)
				assert.Equal(t, "/workspace", c.WorkingDir)
				require.Len(t, pod.Volumes, 2)
				assert.Equal(t, "baton", pod.Volumes[1].Name)
			},
		},
		{
			name:    "log stream broken mid-line",
			step:    Step{Results: []string{"out"}, Spec: events.TaskSpec{Image: "alpine", Command: []string{"make"}}},
			log:     func(m string) string { return "first\nsecond\n" + resultLine(m, "out", "ok") },
			breakAt: len("first\nsec"),
			cond:    complete, wantLog: "first\nsecond\n",
			want: Outcome{Status: StatusSucceeded, ExitCode: new(0), Results: map[string]string{"out": "ok"}},
		},
		{
			name:    "log stream broken in a result line",
			step:    Step{Results: []string{"out"}, Spec: events.TaskSpec{Image: "alpine", Command: []string{"make"}}},
			log:     func(m string) string { return "first\nsecond\n" + resultLine(m, "out", "ok") },
			breakAt: len("first\nsecond\n::baton"),
			cond:    complete, wantLog: "first\nsecond\n",
			want: Outcome{Status: StatusSucceeded, ExitCode: new(0), Results: map[string]string{"out": "ok"}},
		},
		{
			name: "logs through the API server",
			step: Step{Spec: events.TaskSpec{Image: "alpine", Command: []string{"true"}}},
			cond: complete, want: exitedWith(0), wantLog: "fake logs",
		},
		{
			name: "shebang script",
			step: Step{Spec: events.TaskSpec{Image: "python:3", Script: "#!/usr/bin/env python3\nprint(1)"}},
			log:  func(string) string { return "1\n" },
			cond: complete, want: exitedWith(0), wantLog: "1\n",
			check: func(t *testing.T, c corev1.Container, _ corev1.PodSpec) {
				assert.Equal(t, []string{"/baton/script"}, c.Command)
				assert.Empty(t, c.Args)
			},
		},
		{
			name: "job past its deadline",
			step: Step{Spec: events.TaskSpec{Image: "alpine", Args: []string{"sleep", "1d"}}},
			log:  func(string) string { return "" },
			code: -1, cond: batchv1.JobCondition{Type: batchv1.JobFailed, Reason: "DeadlineExceeded", Message: "Job was active longer than specified deadline"},
			want: Outcome{Status: StatusFailed, Message: "job failed: DeadlineExceeded: Job was active longer than specified deadline"},
			check: func(t *testing.T, c corev1.Container, _ corev1.PodSpec) {
				assert.Empty(t, c.Command)
				assert.Equal(t, []string{"sleep", "1d"}, c.Args)
			},
		},
		{
			name: "oversized result",
			step: Step{Results: []string{"big"}, Spec: events.TaskSpec{Image: "alpine", Command: []string{"make"}}},
			log:  func(m string) string { return resultLine(m, "big", strings.Repeat("x", MaxResultSize+1)) },
			cond: complete,
			want: Outcome{Status: StatusFailed, ExitCode: new(0), Message: "result big: is larger than 64 KiB"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, client := newTestKube(t, tt.log, false, tt.breakAt)
			step := tt.step
			step.TaskRunID, step.Attempt = "tr-"+strings.ReplaceAll(tt.name, " ", "-"), i+1
			step.Dir = t.TempDir()
			ctx := context.Background()
			if tt.deadline {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Hour)
				defer cancel()
			}
			var out bytes.Buffer
			done := make(chan Outcome, 1)
			go func() { done <- k.Execute(ctx, step, &out) }()
			name := JobName(step.TaskRunID, step.Attempt)
			job := startedJob(t, client, name)
			endJob(t, client, name, tt.code, tt.cond)
			got := <-done
			assert.Equal(t, tt.want, got)
			if tt.wantLog != "" {
				assert.Equal(t, tt.wantLog, out.String())
			}

			assert.Equal(t, int32(0), *job.Spec.BackoffLimit)
			assert.Equal(t, map[string]string{
				LabelManagedBy: ManagedBy, LabelOwner: "runner-0", LabelJob: name,
				LabelTaskRun: labelSafe(step.TaskRunID), LabelAttempt: job.Labels[LabelAttempt],
			}, job.Labels)
			assert.Equal(t, step.TaskRunID, job.Annotations[AnnotationTaskRun])
			assert.Equal(t, tt.deadline, job.Spec.ActiveDeadlineSeconds != nil)
			pod := job.Spec.Template.Spec
			require.Len(t, pod.Containers, 1)
			c := pod.Containers[0]
			secret, err := client.CoreV1().Secrets(testNamespace).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			require.Len(t, secret.OwnerReferences, 1)
			assert.Equal(t, job.UID, secret.OwnerReferences[0].UID)
			raw, err := json.Marshal(job)
			require.NoError(t, err)
			require.Len(t, c.Env, len(step.Spec.Env))
			for i, e := range step.Spec.Env {
				assert.NotContains(t, string(raw), e.Value, "the job's spec holds an env value")
				assert.Equal(t, e.Name, c.Env[i].Name)
				assert.Empty(t, c.Env[i].Value)
				ref := c.Env[i].ValueFrom.SecretKeyRef
				require.NotNil(t, ref)
				assert.Equal(t, name, ref.Name)
				assert.Equal(t, e.Value, string(secret.Data[ref.Key]))
			}
			if step.Spec.Script != "" {
				assert.NotContains(t, string(raw), step.Spec.Script)
				assert.Equal(t, step.Spec.Script, string(secret.Data["script"]))
			}
			if tt.check != nil {
				tt.check(t, c, pod)
			}
		})
	}
}

func deletedForeground(t *testing.T, client *fake.Clientset, name string) {
	t.Helper()
	_, err := client.BatchV1().Jobs(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
	assert.True(t, apierrors.IsNotFound(err), "job still there: %v", err)
	found := false
	for _, a := range client.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.Resource.Resource == "jobs" && d.Name == name {
			found = true
			require.NotNil(t, d.DeleteOptions.PropagationPolicy)
			assert.Equal(t, metav1.DeletePropagationForeground, *d.DeleteOptions.PropagationPolicy)
		}
	}
	assert.True(t, found, "no delete of job %s", name)
}

func TestKubernetesStop(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cause     error
		want      Outcome
		wantGone  bool
		wantFound bool
	}{
		{name: "cancel", cause: ErrCancelled, want: Outcome{Status: StatusCancelled, Message: "cancelled"}, wantGone: true},
		{name: "timeout", cause: context.DeadlineExceeded, want: Outcome{Status: StatusTimedOut, Message: "timed out"}, wantGone: true},
		{name: "runner stops", cause: ErrDetach, want: Outcome{Detached: true}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, client := newTestKube(t, nil, true)
			step := Step{TaskRunID: "tr-stop", Attempt: i + 1, Dir: t.TempDir(), Spec: events.TaskSpec{Image: "alpine", Command: []string{"sleep", "600"}}}
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			done := make(chan Outcome, 1)
			go func() { done <- k.Execute(ctx, step, io.Discard) }()
			name := JobName(step.TaskRunID, step.Attempt)
			startedJob(t, client, name)
			logs := k.logs.(*podLogs)
			require.Eventually(t, func() bool {
				logs.mu.Lock()
				defer logs.mu.Unlock()
				return logs.follows == 1
			}, 10*time.Second, 5*time.Millisecond)
			stop(tt.cause)
			assert.Equal(t, tt.want, <-done)
			if tt.wantGone {
				deletedForeground(t, client, name)
				return
			}
			_, err := client.BatchV1().Jobs(testNamespace).Get(context.Background(), name, metav1.GetOptions{})
			assert.NoError(t, err, "a detached step's job is kept")
		})
	}
}

func TestKubernetesAdopt(t *testing.T) {
	t.Parallel()
	log := func(m string) string { return "first\nsecond\n" + resultLine(m, "out", "ok") }
	k, client := newTestKube(t, log, false)
	ctx := context.Background()
	held := Step{TaskRunID: "tr-held", Attempt: 2, Results: []string{"out"}, Spec: events.TaskSpec{Image: "alpine", Command: []string{"make"}}}
	gone := Step{TaskRunID: "tr-gone", Attempt: 1, Spec: events.TaskSpec{Image: "alpine", Command: []string{"make"}}}
	// Jobs a previous process of the runner started, and one of another runner.
	other, _ := newTestKube(t, log, false)
	other.client, other.opts.Owner = client, "runner-1"
	for _, s := range []struct {
		k    *Kubernetes
		step Step
	}{{k, held}, {k, gone}, {other, Step{TaskRunID: "tr-other", Attempt: 1, Spec: gone.Spec}}} {
		job, secret, err := s.k.manifests(ctx, s.step)
		require.NoError(t, err)
		job.Spec.Suspend = new(false)
		_, err = client.BatchV1().Jobs(testNamespace).Create(ctx, job, metav1.CreateOptions{})
		require.NoError(t, err)
		_, err = client.CoreV1().Secrets(testNamespace).Create(ctx, secret, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	deleted, err := k.Adopt(ctx, func(id string, attempt int) bool { return id == held.TaskRunID && attempt == held.Attempt })
	require.NoError(t, err)
	assert.Equal(t, 1, deleted)
	deletedForeground(t, client, JobName(gone.TaskRunID, gone.Attempt))
	for _, name := range []string{JobName(held.TaskRunID, held.Attempt), JobName("tr-other", 1)} {
		_, err := client.BatchV1().Jobs(testNamespace).Get(ctx, name, metav1.GetOptions{})
		assert.NoError(t, err, "job %s", name)
	}

	// The held attempt is followed to its end, its log from where the last process left it.
	var out bytes.Buffer
	done := make(chan Outcome, 1)
	go func() { done <- k.Resume(ctx, held, &out, int64(len("first\n"))) }()
	name := JobName(held.TaskRunID, held.Attempt)
	startedJob(t, client, name)
	endJob(t, client, name, 0, batchv1.JobCondition{Type: batchv1.JobComplete})
	got := <-done
	assert.Equal(t, Outcome{Status: StatusSucceeded, ExitCode: new(0), Results: map[string]string{"out": "ok"}}, got)
	assert.Equal(t, "second\n", out.String())

	k.Release(held)
	deletedForeground(t, client, name)
}

func TestKubernetesResumeLost(t *testing.T) {
	t.Parallel()
	k, client := newTestKube(t, nil, false)
	ctx := context.Background()
	suspended := Step{TaskRunID: "tr-suspended", Attempt: 1, Spec: events.TaskSpec{Image: "alpine", Command: []string{"true"}}}
	job, _, err := k.manifests(ctx, suspended)
	require.NoError(t, err)
	_, err = client.BatchV1().Jobs(testNamespace).Create(ctx, job, metav1.CreateOptions{})
	require.NoError(t, err)
	tests := []struct {
		name string
		step Step
		want string
	}{
		{name: "never started", step: suspended, want: "the step's job never started"},
		{name: "gone", step: Step{TaskRunID: "tr-missing", Attempt: 1}, want: "the step's job " + JobName("tr-missing", 1) + " is gone: it never started, or was deleted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Outcome{Status: StatusFailed, Message: tt.want}, k.Resume(ctx, tt.step, io.Discard, 0))
		})
	}
	t.Cleanup(func() {
		_, err := client.BatchV1().Jobs(testNamespace).Get(ctx, job.Name, metav1.GetOptions{})
		assert.True(t, apierrors.IsNotFound(err), "the suspended job is deleted")
	})
}

func TestKubernetesRefuses(t *testing.T) {
	t.Parallel()
	k, client := newTestKube(t, nil, false)
	tests := []struct {
		name string
		step Step
		want string
	}{
		{name: "no image", step: Step{TaskRunID: "a", Spec: events.TaskSpec{Command: []string{"true"}}}, want: "a step runs on Kubernetes only with an image"},
		{name: "results without command", step: Step{TaskRunID: "a", Results: []string{"x"}, Spec: events.TaskSpec{Image: "alpine"}}, want: "a step with results runs on Kubernetes only with a command or a script"},
		{name: "working dir outside", step: Step{TaskRunID: "a", Spec: events.TaskSpec{Image: "alpine", WorkingDir: "../etc"}}, want: `working directory "../etc" leaves the workspace`},
		{name: "result name", step: Step{TaskRunID: "a", Results: []string{"../x"}, Spec: events.TaskSpec{Image: "alpine", Command: []string{"true"}}}, want: `result name "../x" is not a plain file name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Outcome{Status: StatusFailed, Message: tt.want}, k.Execute(context.Background(), tt.step, io.Discard))
		})
	}
	t.Cleanup(func() {
		list, err := client.BatchV1().Jobs(testNamespace).List(context.Background(), metav1.ListOptions{})
		require.NoError(t, err)
		assert.Empty(t, list.Items, "no job is created for a step refused")
	})
}

func TestJobName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id      string
		attempt int
	}{
		{id: "01JABCDEF", attempt: 1},
		{id: "01JABCDEF", attempt: 2},
		{id: strings.Repeat("Very_Long.ID/", 10), attempt: 12},
		{id: "--", attempt: 1},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		name := JobName(tt.id, tt.attempt)
		assert.LessOrEqual(t, len(name), 63, name)
		assert.Regexp(t, `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, name)
		assert.False(t, seen[name], "%s repeats", name)
		seen[name] = true
	}
}

func TestKubernetesAPIErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		err       error
		failures  int32 // -1: every call
		want      Outcome
		wantGone  bool
		startsPod bool
	}{
		{
			name: "api server away a while", err: apierrors.NewServiceUnavailable("restarting"), failures: 2,
			want: exitedWith(0), startsPod: true,
		},
		{
			name: "runner refused", err: apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no RBAC")), failures: -1,
			want:     Outcome{Status: StatusFailed, Message: "watch job: pods is forbidden: no RBAC"},
			wantGone: true,
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k, client := newTestKube(t, func(string) string { return "" }, false)
			var calls atomic.Int32
			client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
				if n := calls.Add(1); tt.failures < 0 || n <= tt.failures {
					return true, nil, tt.err
				}
				return false, nil, nil
			})
			step := Step{TaskRunID: "tr-api", Attempt: i + 1, Dir: t.TempDir(), Spec: events.TaskSpec{Image: "alpine", Command: []string{"true"}}}
			done := make(chan Outcome, 1)
			go func() { done <- k.Execute(context.Background(), step, io.Discard) }()
			name := JobName(step.TaskRunID, step.Attempt)
			if tt.startsPod {
				startedJob(t, client, name)
				endJob(t, client, name, 0, batchv1.JobCondition{Type: batchv1.JobComplete})
			}
			assert.Equal(t, tt.want, <-done)
			if tt.wantGone {
				deletedForeground(t, client, name)
			}
		})
	}
}
