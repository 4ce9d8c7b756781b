package executor

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// Kubernetes runs each attempt of a step as one Job (BackoffLimit 0: retrying is the
// runs service's call) in one namespace:
//
//   - The Job is created suspended; then a Secret, owned by the Job so that deleting the
//     Job deletes it, receives the step's env values and script; then the Job is let go.
//     The Job's spec names env values only by secretKeyRef: the runner cannot tell a
//     secret's value from another, so none is written there. The script is mounted from
//     the Secret at /baton/script.
//   - The Pod's workspace is an emptyDir at /workspace, results at /workspace/results.
//   - Its log is followed as the Pod writes it, line by line, to the runner's log stream;
//     a stream that breaks is followed again past what was read. The Job and its Pod are
//     watched; while the API server is away the runner watches again, with backoff.
//   - Results are read from the log: a step that declares results runs under a /bin/sh
//     wrapper that, once the step's command exits, prints each file of the results
//     directory on a line of its own, marked with a random token kept in the Job's
//     annotations, then exits with the command's code. Those lines are taken out of the
//     log. Such a step needs /bin/sh, base64 and head in its image, and a command or a
//     script (the image's own entrypoint cannot be wrapped).
//   - The outcome is the Job's: Complete succeeds; Failed fails with the container's exit
//     code, or the Job's reason when it has none (a deadline, an evicted Pod).
//   - Cancel and timeout delete the Job with Foreground propagation, so its Pod goes
//     with it (and its Secret right after), as does a Job the runner is refused to watch.
//     A deadline is also the Job's activeDeadlineSeconds, which holds without the runner. The runner stopping (ErrDetach) leaves it running: the Job is
//     labelled with the runner (Owner) and the attempt, and the next start follows the
//     Jobs of attempts it still holds (Resume) and deletes the others (Adopt).
//   - A Job that ended stays until the runner has reported its outcome (Release); a
//     day's TTL removes the ones a runner never came back for.
type Kubernetes struct {
	client kubernetes.Interface
	logs   LogSource
	opts   KubernetesOptions
}

// KubernetesOptions configure a Kubernetes executor.
type KubernetesOptions struct {
	// Namespace holds the Jobs; required.
	Namespace string
	// Owner labels the Jobs this runner starts; it must stay the same across the runner's
	// restarts (with its work directory) for it to find them again, and differ between
	// runners sharing a namespace. At most 63 letters, digits, '-', '_' or '.'.
	Owner string
	// ServiceAccount runs the Pods; empty runs them under the namespace's default account
	// with no API token mounted.
	ServiceAccount string
	// NodeSelector constrains where the Pods run.
	NodeSelector map[string]string
	// Resources are the step container's requests and limits.
	Resources corev1.ResourceRequirements
	// Logger reports what only an operator can fix; nil means slog.Default().
	Logger *slog.Logger
}

// LogSource follows a container's log from its start until the container ends.
type LogSource interface {
	Follow(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error)
}

// PodLogs follows logs through the API server.
type PodLogs struct{ Client kubernetes.Interface }

// Follow implements LogSource.
func (p PodLogs) Follow(ctx context.Context, namespace, pod, container string) (io.ReadCloser, error) {
	return p.Client.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Follow: true}).Stream(ctx)
}

// Labels and annotations of the Jobs and Pods a Kubernetes executor starts.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy         = "baton-runner"
	LabelOwner        = "baton-flow.io/runner"
	LabelTaskRun      = "baton-flow.io/task-run"
	LabelAttempt      = "baton-flow.io/attempt"
	LabelJob          = "baton-flow.io/job"
	AnnotationTaskRun = "baton-flow.io/task-run-id"
	AnnotationMarker  = "baton-flow.io/result-marker"
)

const (
	stepContainer   = "step"
	scriptMount     = "/baton"
	kubeCallTimeout = 30 * time.Second
	// jobTTL removes a finished Job its runner never came back for.
	jobTTL = 24 * 60 * 60
)

// resultWrapper runs the step ("$@" after the marker) and then prints each results file
// as "<marker> <base64 name> <base64 value>", at most MaxResultSize+3 bytes of it.
const resultWrapper = `marker=$1; shift
mkdir -p ` + containerWorkspace + `/results || exit 125
"$@"
code=$?
for f in ` + containerWorkspace + `/results/*; do
  [ -f "$f" ] || continue
  printf '%s %s %s\n' "$marker" "$(printf '%s' "${f##*/}" | base64 | tr -d '\n')" "$(head -c 65539 "$f" | base64 | tr -d '\n')"
done
exit $code
`

// NewKubernetes returns an executor running Jobs through client; logs nil follows them
// through the API server.
func NewKubernetes(client kubernetes.Interface, logs LogSource, opts KubernetesOptions) (*Kubernetes, error) {
	if opts.Namespace == "" {
		return nil, errors.New("kubernetes executor: a namespace is required")
	}
	if errs := validLabelValue(opts.Owner); opts.Owner == "" || errs != "" {
		return nil, fmt.Errorf("kubernetes executor: owner %q is not a label value%s", opts.Owner, errs)
	}
	if logs == nil {
		logs = PodLogs{Client: client}
	}
	return &Kubernetes{client: client, logs: logs, opts: opts}, nil
}

// Name names the Kubernetes executor in the runner's metrics.
func (k *Kubernetes) Name() string { return "kubernetes" }

func (k *Kubernetes) logger() *slog.Logger { return cmp.Or(k.opts.Logger, slog.Default()) }

// Execute implements Executor.
func (k *Kubernetes) Execute(ctx context.Context, step Step, out io.Writer) Outcome {
	job, secret, err := k.manifests(ctx, step)
	if err != nil {
		return failed(err)
	}
	jobs := k.client.BatchV1().Jobs(k.opts.Namespace)
	created, err := jobs.Create(ctx, job, metav1.CreateOptions{})
	if err != nil {
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(fmt.Errorf("create job: %w", err))
	}
	bg := context.WithoutCancel(ctx)
	secret.OwnerReferences = []metav1.OwnerReference{{
		// Without BlockOwnerDeletion, which would need the right to update the Job's
		// finalizers: the Secret goes right after the Job rather than with it.
		APIVersion: "batch/v1", Kind: "Job", Name: created.Name, UID: created.UID,
	}}
	if _, err := k.client.CoreV1().Secrets(k.opts.Namespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		k.delete(bg, created.Name)
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(fmt.Errorf("create the step's secret: %w", err))
	}
	if _, err := jobs.Patch(ctx, created.Name, types.MergePatchType, []byte(`{"spec":{"suspend":false}}`), metav1.PatchOptions{}); err != nil {
		k.delete(bg, created.Name)
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(fmt.Errorf("start job: %w", err))
	}
	return k.follow(ctx, step, created.Name, created.Annotations[AnnotationMarker], out, 0)
}

// Resume implements Resumer: it follows the attempt's Job, sending its log from byte from
// on. A Job that is gone, or never left suspension, fails the attempt.
func (k *Kubernetes) Resume(ctx context.Context, step Step, out io.Writer, from int64) Outcome {
	name := JobName(step.TaskRunID, step.Attempt)
	job, err := k.client.BatchV1().Jobs(k.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return failed(fmt.Errorf("the step's job %s is gone: it never started, or was deleted", name))
	case err != nil:
		if ctx.Err() != nil {
			return stopped(ctx)
		}
		return failed(fmt.Errorf("get job: %w", err))
	case job.Spec.Suspend != nil && *job.Spec.Suspend:
		k.delete(context.WithoutCancel(ctx), name)
		return failed(errors.New("the step's job never started"))
	}
	return k.follow(ctx, step, name, job.Annotations[AnnotationMarker], out, from)
}

// Release implements Resumer: it deletes the attempt's Job, its Pod and Secret.
func (k *Kubernetes) Release(step Step) {
	k.delete(context.Background(), JobName(step.TaskRunID, step.Attempt))
	_ = os.RemoveAll(step.Dir)
}

// Adopt takes up the Jobs a previous process of this runner (the same Owner) left: those
// of attempts following reports the runner still follows are left for Resume, the others
// deleted. It returns how many it deleted.
func (k *Kubernetes) Adopt(ctx context.Context, following func(taskRunID string, attempt int) bool) (int, error) {
	sel := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy, LabelOwner: k.opts.Owner}).String()
	list, err := k.client.BatchV1().Jobs(k.opts.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return 0, fmt.Errorf("list the runner's jobs: %w", err)
	}
	deleted := 0
	for _, job := range list.Items {
		attempt, err := strconv.Atoi(job.Labels[LabelAttempt])
		if id := job.Annotations[AnnotationTaskRun]; err == nil && id != "" && following(id, attempt) {
			k.logger().Info("kubernetes job adopted", "job", job.Name, "taskRunId", id, "attempt", attempt)
			continue
		}
		if err := k.remove(ctx, job.Name); err != nil {
			return deleted, err
		}
		deleted++
		k.logger().Info("kubernetes job of an attempt no longer held deleted", "job", job.Name)
	}
	return deleted, nil
}

// follow streams the Job's log to out (from byte from on) and returns its outcome once it
// ended. ctx ending deletes the Job, unless the runner is stopping.
func (k *Kubernetes) follow(ctx context.Context, step Step, name, marker string, out io.Writer, from int64) Outcome {
	bg := context.WithoutCancel(ctx)
	// The log stops with ctx; how the step then ends is decided below.
	logCtx, cancelLogs := context.WithCancel(bg)
	defer cancelLogs()
	defer context.AfterFunc(ctx, cancelLogs)()

	lr := &logReader{out: &skipWriter{w: out, skip: from}, marker: marker, want: step.Results}
	pod, err := k.waitStarted(logCtx, name, out)
	switch {
	case ctx.Err() != nil:
		return k.stopped(ctx, name)
	case errors.Is(err, errJobGone):
		return failed(fmt.Errorf("the step's job %s was deleted", name))
	case err != nil:
		fmt.Fprintf(out, "[runner: cannot follow the step's pod: %v]\n", err)
	case pod != "":
		k.copyLog(ctx, logCtx, pod, lr, out)
	}
	var job *batchv1.Job
	var pods []corev1.Pod
	err = k.until(ctx, name, func(j *batchv1.Job, p []corev1.Pod) bool {
		job, pods = j, p
		return jobEnded(j) != ""
	})
	switch {
	case ctx.Err() != nil:
		return k.stopped(ctx, name)
	case errors.Is(err, errJobGone):
		return failed(fmt.Errorf("the step's job %s was deleted", name))
	case err != nil:
		// The runner cannot tell how the step ends: it stops it rather than leave it
		// running unreported.
		k.delete(context.WithoutCancel(ctx), name)
		return failed(fmt.Errorf("watch job: %w", err))
	}
	o := jobOutcome(job, pods)
	if len(lr.results) > 0 {
		o.Results = lr.results
	}
	if lr.err != nil {
		o.Status, o.Message = StatusFailed, lr.err.Error()
	}
	return o
}

// stopped ends a step whose ctx ended: the runner stopping leaves the Job for its next
// start; otherwise the Job goes.
func (k *Kubernetes) stopped(ctx context.Context, name string) Outcome {
	if errors.Is(context.Cause(ctx), ErrDetach) {
		return Outcome{Detached: true}
	}
	k.delete(context.WithoutCancel(ctx), name)
	return stopped(ctx)
}

// delete removes a Job, logging what fails.
func (k *Kubernetes) delete(ctx context.Context, name string) {
	if err := k.remove(ctx, name); err != nil {
		k.logger().Warn("delete kubernetes job", "job", name, "err", err)
	}
}

func (k *Kubernetes) remove(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, kubeCallTimeout)
	defer cancel()
	err := k.client.BatchV1().Jobs(k.opts.Namespace).Delete(ctx, name, metav1.DeleteOptions{
		PropagationPolicy: new(metav1.DeletePropagationForeground),
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete job %s: %w", name, err)
	}
	return nil
}

var errJobGone = errors.New("job gone")

// waitStarted waits for the Job's Pod to start (or end), writing to out why it waits
// when the Pod cannot start yet; "" when the Job ended without a Pod that started.
func (k *Kubernetes) waitStarted(ctx context.Context, name string, out io.Writer) (string, error) {
	var pod, said string
	err := k.until(ctx, name, func(j *batchv1.Job, pods []corev1.Pod) bool {
		for _, p := range pods {
			if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
				pod = p.Name
				return true
			}
			if why := waiting(p); why != "" && why != said {
				said = why
				fmt.Fprintf(out, "[runner: pod %s waits: %s]\n", p.Name, why)
			}
		}
		return jobEnded(j) != ""
	})
	return pod, err
}

// waiting says why a pending Pod's step container is not running, when it says.
func waiting(p corev1.Pod) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; cs.Name == stepContainer && w != nil && w.Reason != "" && w.Reason != "ContainerCreating" {
			return strings.TrimSuffix(w.Reason+": "+w.Message, ": ")
		}
	}
	return ""
}

// until calls check with the Job and its Pods as they are, and again whenever either
// changes, until it answers true; errJobGone when the Job is deleted.
func (k *Kubernetes) until(ctx context.Context, name string, check func(*batchv1.Job, []corev1.Pod) bool) error {
	jobs := k.client.BatchV1().Jobs(k.opts.Namespace)
	pods := k.client.CoreV1().Pods(k.opts.Namespace)
	jobSel := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	podSel := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{LabelJob: name}).String()}
	wait := 100 * time.Millisecond
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		err := func() error {
			jw, err := jobs.Watch(ctx, jobSel)
			if err != nil {
				return err
			}
			defer jw.Stop()
			pw, err := pods.Watch(ctx, podSel)
			if err != nil {
				return err
			}
			defer pw.Stop()
			done, err := k.watchUntil(ctx, name, jw, pw, check)
			if done && err == nil {
				return errDone
			}
			return err
		}()
		switch {
		case errors.Is(err, errDone):
			return nil
		case err == nil:
			// A watch ended (the API server closes them every few minutes): watch again.
			wait = 100 * time.Millisecond
			continue
		case errors.Is(err, errJobGone), ctx.Err() != nil, !transient(err):
			return err
		}
		// The API server is away for a while (a restart, an upgrade): the step goes on.
		k.logger().Warn("kubernetes api call failed; retrying", "job", name, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

var errDone = errors.New("done")

// transient reports whether a failed API call may succeed later: not one the runner is
// refused or gets wrong.
func transient(err error) bool {
	return !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) && !apierrors.IsBadRequest(err) &&
		!apierrors.IsInvalid(err) && !apierrors.IsMethodNotSupported(err)
}

func (k *Kubernetes) watchUntil(ctx context.Context, name string, jw, pw watch.Interface, check func(*batchv1.Job, []corev1.Pod) bool) (bool, error) {
	for {
		job, err := k.client.BatchV1().Jobs(k.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, errJobGone
		}
		if err != nil {
			return true, err
		}
		list, err := k.client.CoreV1().Pods(k.opts.Namespace).List(ctx, metav1.ListOptions{
			LabelSelector: labels.SelectorFromSet(labels.Set{LabelJob: name}).String(),
		})
		if err != nil {
			return true, err
		}
		if check(job, list.Items) {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return true, ctx.Err()
		case _, ok := <-jw.ResultChan():
			if !ok {
				return false, nil
			}
		case _, ok := <-pw.ResultChan():
			if !ok {
				return false, nil
			}
		}
	}
}

// jobEnded is the type of the Job's terminal condition, "" while it runs.
func jobEnded(j *batchv1.Job) batchv1.JobConditionType {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return c.Type
		}
	}
	return ""
}

// jobOutcome is the outcome of a Job that ended: the step container's exit code where a
// Pod tells it, else the Job's condition.
func jobOutcome(j *batchv1.Job, pods []corev1.Pod) Outcome {
	var code *int
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; cs.Name == stepContainer && t != nil {
				c := int(t.ExitCode)
				code = &c
			}
		}
	}
	if jobEnded(j) == batchv1.JobComplete {
		return exitedWith(0)
	}
	if code != nil && *code != 0 {
		return exitedWith(*code)
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed {
			return failed(fmt.Errorf("job failed: %s", strings.TrimSuffix(c.Reason+": "+c.Message, ": ")))
		}
	}
	return failed(errors.New("job failed"))
}

// logTries is how many times a step's log is followed when its stream breaks.
const logTries = 5

// copyLog follows the step container's log into lr until the container ends. A stream
// that breaks (the API server or kubelet restarting) is followed again from the start,
// past what was read, a few times; then the log is given up with a line saying so.
func (k *Kubernetes) copyLog(ctx, logCtx context.Context, pod string, lr *logReader, out io.Writer) {
	for try := 1; ; try++ {
		err := k.followLog(logCtx, pod, lr)
		if err == nil || ctx.Err() != nil {
			return
		}
		if try == logTries {
			fmt.Fprintf(out, "[runner: pod log stream broke: %v]\n", err)
			return
		}
		k.logger().Info("kubernetes pod log stream broke; following it again", "pod", pod, "read", lr.consumed, "err", err)
	}
}

func (k *Kubernetes) followLog(ctx context.Context, pod string, lr *logReader) error {
	rc, err := k.logs.Follow(ctx, k.opts.Namespace, pod, stepContainer)
	if err != nil {
		return err
	}
	defer rc.Close()
	if _, err := io.CopyN(io.Discard, rc, lr.consumed); err != nil {
		return fmt.Errorf("skip the log read before: %w", err)
	}
	return lr.read(rc)
}

// manifests builds the attempt's Job, suspended, and its Secret.
func (k *Kubernetes) manifests(ctx context.Context, step Step) (*batchv1.Job, *corev1.Secret, error) {
	spec := step.Spec
	if spec.Image == "" {
		return nil, nil, errors.New("a step runs on Kubernetes only with an image")
	}
	if step.TaskRunID == "" {
		return nil, nil, errors.New("the attempt has no task run id")
	}
	for _, name := range step.Results {
		if !validName(name) {
			return nil, nil, fmt.Errorf("result name %q is not a plain file name", name)
		}
	}
	spec = substitute(spec, step.Results, containerWorkspace+"/results")
	name := JobName(step.TaskRunID, step.Attempt)
	marker, err := newMarker()
	if err != nil {
		return nil, nil, err
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.opts.Namespace, Labels: k.labels(step, name)},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{},
	}
	c := corev1.Container{
		Name: stepContainer, Image: spec.Image, Resources: k.opts.Resources,
		VolumeMounts: []corev1.VolumeMount{{Name: "workspace", MountPath: containerWorkspace}},
	}
	volumes := []corev1.Volume{{Name: "workspace", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	var argv []string
	switch {
	case spec.Script != "":
		secret.Data["script"] = []byte(spec.Script)
		volumes = append(volumes, corev1.Volume{Name: "baton", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: name, Items: []corev1.KeyToPath{{Key: "script", Path: "script", Mode: new(int32(0o755))}},
		}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "baton", MountPath: scriptMount, ReadOnly: true})
		script := path.Join(scriptMount, "script")
		if strings.HasPrefix(spec.Script, "#!") {
			argv = []string{script}
		} else {
			argv = append(strings.Fields(cmp.Or(spec.Shell, DefaultShell)), script)
		}
	case len(spec.Command) > 0:
		argv = append(append([]string(nil), spec.Command...), spec.Args...)
	}
	switch {
	case len(step.Results) > 0 && argv == nil:
		return nil, nil, errors.New("a step with results runs on Kubernetes only with a command or a script")
	case len(step.Results) > 0:
		c.Command = []string{DefaultShell, "-c", resultWrapper, "baton-step", marker}
		c.Args = argv
	case argv != nil && spec.Script != "":
		c.Command = argv
	default:
		c.Command, c.Args = spec.Command, spec.Args
	}
	c.WorkingDir, err = podWorkingDir(spec.WorkingDir)
	if err != nil {
		return nil, nil, err
	}
	for i, e := range spec.Env {
		key := fmt.Sprintf("env-%d", i)
		secret.Data[key] = []byte(e.Value)
		c.Env = append(c.Env, corev1.EnvVar{Name: e.Name, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key,
		}}})
	}
	podLabels := map[string]string{LabelManagedBy: ManagedBy, LabelJob: name}
	pod := corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c}, Volumes: volumes,
		ServiceAccountName: k.opts.ServiceAccount, NodeSelector: k.opts.NodeSelector,
		// A step sees neither the cluster's services nor, unless given an account, its API.
		EnableServiceLinks: new(false),
	}
	if k.opts.ServiceAccount == "" {
		pod.AutomountServiceAccountToken = new(false)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: k.opts.Namespace, Labels: k.labels(step, name),
			Annotations: map[string]string{AnnotationTaskRun: step.TaskRunID, AnnotationMarker: marker},
		},
		Spec: batchv1.JobSpec{
			Suspend: new(true), BackoffLimit: new(int32(0)), TTLSecondsAfterFinished: new(int32(jobTTL)),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels}, Spec: pod},
		},
	}
	if d, ok := ctx.Deadline(); ok {
		// The cluster ends the step on time even if the runner is gone.
		job.Spec.ActiveDeadlineSeconds = new(max(int64(time.Until(d).Seconds()), 1))
	}
	return job, secret, nil
}

func (k *Kubernetes) labels(step Step, name string) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy, LabelOwner: k.opts.Owner, LabelJob: name,
		LabelTaskRun: labelSafe(step.TaskRunID), LabelAttempt: strconv.Itoa(step.Attempt),
	}
}

// podWorkingDir resolves the step's working directory, relative ones under the workspace.
func podWorkingDir(wd string) (string, error) {
	switch {
	case wd == "":
		return containerWorkspace, nil
	case path.IsAbs(wd):
		return wd, nil
	case !filepath.IsLocal(wd):
		return "", fmt.Errorf("working directory %q leaves the workspace", wd)
	}
	return path.Join(containerWorkspace, wd), nil
}

// JobName is the name of an attempt's Job (and Secret): a DNS label from the task run id
// and attempt, with a hash of both so that ids cut short or mapped to it differ.
func JobName(taskRunID string, attempt int) string {
	sum := sha256.Sum256([]byte(taskRunID + "/" + strconv.Itoa(attempt)))
	base := strings.Trim(dnsSafe(taskRunID), "-")
	if len(base) > 30 {
		base = strings.TrimRight(base[:30], "-")
	}
	return fmt.Sprintf("baton-%s-%d-%s", base, attempt, hex.EncodeToString(sum[:5]))
}

func dnsSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s)
}

// labelSafe makes s a label value, for selecting by hand; the exact id is an annotation.
func labelSafe(s string) string {
	v := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s)
	if len(v) > 63 {
		v = v[:63]
	}
	return strings.Trim(v, "-_.")
}

func validLabelValue(v string) string {
	if labelSafe(v) != v {
		return ": at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	}
	return ""
}

func newMarker() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "::baton-result-" + hex.EncodeToString(b) + "::", nil
}
