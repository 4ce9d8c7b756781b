package domain

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/names"
	"github.com/baton-flow/baton/libs/tasktype"
)

// Types lists the task types a catalogue task may have: all but start and end, which are
// structural and have no catalogue entry.
var Types = []string{
	tasktype.Template, tasktype.Custom, tasktype.Script, tasktype.Generic, tasktype.Decision,
	tasktype.SetWFProperty, tasktype.SetWFStatus, tasktype.Sleep, tasktype.Approval, tasktype.Manual,
	tasktype.EventWait, tasktype.AcquireLock, tasktype.ReleaseLock, tasktype.RunWorkflow,
	tasktype.RunScheduledWorkflow,
}

// ParamTypes are the AbstractParam types the UI knows.
var ParamTypes = []string{
	"text", "textarea", "email", "number", "url", "boolean", "password", "select", "multiselect",
	"json", "texteditor", "texteditor::javascript", "texteditor::text", "texteditor::shell",
	"texteditor::yaml",
}

// ResultTypes are Tekton's result types.
var ResultTypes = []string{"string", "array", "object"}

// MaxNameLength bounds task names.
const MaxNameLength = 64

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)
	// paramPattern is Tekton's rule for parameter and result names, kept for every task so
	// each one can leave as valid Tekton YAML.
	paramPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)
	// dnsLabel is Kubernetes' rule for step and workspace names.
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
)

// ValidateName checks a task name: letters, digits and `-`, 1 to 64 characters, not
// reserved.
func ValidateName(name string) error {
	if !namePattern.MatchString(name) {
		return apperr.Invalid(apperr.TaskInvalidName,
			fmt.Sprintf("The task name '%s' is not valid: use 1 to %d letters, digits and '-'.", name, MaxNameLength),
			apperr.FieldError{Field: "name", Message: "must match ^[A-Za-z0-9-]{1,64}$"})
	}
	if names.Reserved(name) {
		return apperr.Invalid(apperr.TaskInvalidName, fmt.Sprintf("The task name '%s' is reserved.", name),
			apperr.FieldError{Field: "name", Message: "reserved"})
	}
	return nil
}

// AnnotationPrefix starts the annotations Baton uses to carry its own fields through
// Tekton YAML; the ones it uses are refused as a task's own annotations.
const AnnotationPrefix = "baton.io/"

// Annotations Baton's YAML form uses.
const (
	AnnotationDisplayName  = AnnotationPrefix + "displayName"
	AnnotationIcon         = AnnotationPrefix + "icon"
	AnnotationCategory     = AnnotationPrefix + "category"
	AnnotationVerified     = AnnotationPrefix + "verified"
	AnnotationType         = AnnotationPrefix + "type"
	AnnotationStatus       = AnnotationPrefix + "status"
	AnnotationVersion      = AnnotationPrefix + "version"
	AnnotationScope        = AnnotationPrefix + "scope"
	AnnotationTeam         = AnnotationPrefix + "team"
	AnnotationCreationDate = AnnotationPrefix + "creationDate"
	AnnotationChangelog    = AnnotationPrefix + "changelog"
	AnnotationParams       = AnnotationPrefix + "params"
	AnnotationResults      = AnnotationPrefix + "results"
	AnnotationExtra        = AnnotationPrefix + "extra"
	AnnotationSpecExtra    = AnnotationPrefix + "specExtra"
	AnnotationJSON         = AnnotationPrefix + "annotations"
)

// ReservedAnnotations are the annotation keys Baton's YAML form uses for its own fields.
var ReservedAnnotations = []string{
	AnnotationDisplayName, AnnotationIcon, AnnotationCategory, AnnotationVerified, AnnotationType,
	AnnotationStatus, AnnotationVersion, AnnotationScope, AnnotationTeam, AnnotationCreationDate,
	AnnotationChangelog, AnnotationParams, AnnotationResults, AnnotationExtra, AnnotationSpecExtra,
	AnnotationJSON,
}

// Normalize fills defaults a body may leave out: type template, status active.
func (t *Task) Normalize() {
	if t.Type == "" {
		t.Type = tasktype.Template
	}
	if t.Status == "" {
		t.Status = StatusActive
	}
	if t.Spec.StepName == DefaultStepName {
		t.Spec.StepName = ""
	}
}

// Validate checks t against the rules every stored task keeps, listing every problem.
// The name is checked separately (ValidateName), since a bad one has its own reason.
func (t Task) Validate() []apperr.FieldError {
	var errs []apperr.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !slices.Contains(Types, t.Type) {
		add("type", "unknown task type '%s'", t.Type)
	}
	if !t.Status.Valid() {
		add("status", "must be active or inactive")
	}
	for k := range t.Labels {
		if strings.TrimSpace(k) == "" {
			add("labels", "empty key")
		} else if err := names.CheckLabelKey(k); err != nil {
			add("labels", "%s", err.Error())
		}
	}
	for k := range t.Annotations {
		switch {
		case strings.TrimSpace(k) == "":
			add("annotations", "empty key")
		case slices.Contains(ReservedAnnotations, k):
			add("annotations."+k, "reserved for Baton's YAML form")
		}
	}
	s := t.Spec
	if t.Type == tasktype.Template && strings.TrimSpace(s.Image) == "" {
		add("spec.image", "required for a template task")
	}
	if s.Script != "" && len(s.Command) > 0 {
		add("spec.script", "script cannot be used with command")
	}
	if s.StepName != "" && !dnsLabel.MatchString(s.StepName) {
		add("spec.stepName", "must be a lower-case DNS label")
	}
	for i, e := range s.Envs {
		if strings.TrimSpace(e.Name) == "" {
			add(fmt.Sprintf("spec.envs[%d].name", i), "required")
		}
	}
	seen := map[string]bool{}
	for i, p := range s.Params {
		field := fmt.Sprintf("spec.params[%d]", i)
		switch {
		case p.Name == "":
			add(field+".name", "required")
		case !paramPattern.MatchString(p.Name):
			add(field+".name", "must start with a letter or '_' and hold only letters, digits, '_', '.' and '-'")
		case seen[p.Name]:
			add(field+".name", "duplicate parameter '%s'", p.Name)
		}
		seen[p.Name] = true
		if p.Type != "" && !slices.Contains(ParamTypes, p.Type) {
			add(field+".type", "unknown parameter type '%s'", p.Type)
		}
		if p.MinValueLength != nil && p.MaxValueLength != nil && *p.MinValueLength > *p.MaxValueLength {
			add(field+".minValueLength", "exceeds maxValueLength")
		}
	}
	seen = map[string]bool{}
	for i, r := range s.Results {
		field := fmt.Sprintf("spec.results[%d]", i)
		switch {
		case r.Name == "":
			add(field+".name", "required")
		case !paramPattern.MatchString(r.Name):
			add(field+".name", "must start with a letter or '_' and hold only letters, digits, '_', '.' and '-'")
		case seen[r.Name]:
			add(field+".name", "duplicate result '%s'", r.Name)
		}
		seen[r.Name] = true
		if r.Type != "" && !slices.Contains(ResultTypes, r.Type) {
			add(field+".type", "must be string, array or object")
		}
	}
	seen = map[string]bool{}
	for i, w := range s.Workspaces {
		field := fmt.Sprintf("spec.workspaces[%d].name", i)
		switch {
		case !dnsLabel.MatchString(w.Name):
			add(field, "must be a lower-case DNS label")
		case seen[w.Name]:
			add(field, "duplicate workspace '%s'", w.Name)
		}
		seen[w.Name] = true
	}
	return errs
}

// Invalid is the TASK_INVALID error listing problems.
func Invalid(fields []apperr.FieldError) error {
	msg := "The task is not valid."
	if len(fields) > 0 {
		msg = fmt.Sprintf("The task is not valid: %s: %s.", fields[0].Field, fields[0].Message)
		if len(fields) > 1 {
			msg = fmt.Sprintf("The task is not valid: %s: %s (and %d more problems).", fields[0].Field, fields[0].Message, len(fields)-1)
		}
	}
	return apperr.Invalid(apperr.TaskInvalid, msg, fields...)
}

// Errors of the tasks service. Sentinels match any error of their reason through
// errors.Is.
var (
	ErrTaskNotFound      = apperr.New(apperr.TaskNotFound, "task not found")
	ErrTaskAlreadyExists = apperr.New(apperr.TaskAlreadyExists, "task already exists")
)

// TaskNotFound says the task, or the version of it, does not exist.
func TaskNotFound(ref Ref, version int) error {
	where := "in the global catalogue"
	if ref.Scope == ScopeTeam {
		where = fmt.Sprintf("in team '%s'", ref.Team)
	}
	if version > 0 {
		return apperr.New(apperr.TaskNotFound, "Version %d of task '%s' was not found %s.", version, ref.Name, where)
	}
	return apperr.New(apperr.TaskNotFound, "Task '%s' was not found %s.", ref.Name, where)
}

// TaskAlreadyExists says the name is taken.
func TaskAlreadyExists(ref Ref) error {
	if ref.Scope == ScopeTeam {
		return apperr.New(apperr.TaskAlreadyExists, "Task '%s' already exists in team '%s'.", ref.Name, ref.Team)
	}
	return apperr.New(apperr.TaskAlreadyExists, "Task '%s' already exists in the global catalogue.", ref.Name)
}

// TaskInUse says workflows use the task, naming them.
func TaskInUse(ref Ref, workflows []string) error {
	return apperr.New(apperr.TaskInUse, "Task '%s' is used by the latest version of workflows: %s.",
		ref.String(), strings.Join(workflows, ", "))
}

// Filter selects tasks in a search; empty fields do not filter.
type Filter struct {
	Scope Scope
	// Teams, for team tasks, are the teams searched; at least one.
	Teams    []string
	Names    []string
	Statuses []Status
	Labels   map[string]string
}
