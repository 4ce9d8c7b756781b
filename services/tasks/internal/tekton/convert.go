package tekton

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
)

// propertiesKey is the parameter and result field, kept among a JSON param's or result's
// own fields, that holds Tekton's object properties.
const propertiesKey = "properties"

// Decode reads a task from a YAML body, as Decode in taskjson does from JSON: read-only
// fields (version, scope, team, creation date, the changelog's author and date) are
// ignored. Anything Tekton would refuse, or that is not one step, answers TASK_INVALID
// listing every problem.
func Decode(body []byte) (domain.Task, error) {
	t, problems, _, err := parse(body)
	if err != nil {
		return domain.Task{}, err
	}
	if len(problems) > 0 {
		return domain.Task{}, domain.Invalid(problems)
	}
	reason := t.Changelog.Reason
	t.Version, t.Scope, t.Team, t.CreationDate = 0, "", "", time.Time{}
	t.Changelog = domain.Changelog{Reason: reason}
	return t, nil
}

// Validate checks a YAML body as a task definition: Tekton's rules, the name's and every
// rule a stored task keeps. It returns every problem found, with YAML paths; none means
// the body would be accepted.
func Validate(body []byte) ([]apperr.FieldError, error) {
	t, problems, decoded, err := parse(body)
	if err != nil || !decoded {
		return problems, err
	}
	if t.Name != "" {
		if e, ok := apperr.As(domain.ValidateName(t.Name)); ok {
			for _, f := range e.Fields {
				problems = append(problems, apperr.FieldError{Field: "metadata.name", Message: f.Message})
			}
		}
	}
	noStep := slices.ContainsFunc(problems, func(f apperr.FieldError) bool { return f.Field == "spec.steps" })
	t.Normalize()
	for _, f := range t.Validate() {
		f.Field = yamlPath(f.Field)
		// Without exactly one step, the step's own fields say nothing more.
		if noStep && strings.HasPrefix(f.Field, "spec.steps[0].") {
			continue
		}
		if !slices.Contains(problems, f) {
			problems = append(problems, f)
		}
	}
	return problems, nil
}

// stepFields maps the domain's spec fields to the step's YAML fields.
var stepFields = map[string]string{
	"spec.image": "spec.steps[0].image", "spec.script": "spec.steps[0].script",
	"spec.stepName": "spec.steps[0].name", "spec.command": "spec.steps[0].command",
	"spec.arguments": "spec.steps[0].args", "spec.workingDir": "spec.steps[0].workingDir",
}

var envField = regexp.MustCompile(`^spec\.envs(\[\d+\].*)$`)

// yamlPath turns a domain field path into the path of the same field in the YAML form.
func yamlPath(field string) string {
	if p, ok := stepFields[field]; ok {
		return p
	}
	if m := envField.FindStringSubmatch(field); m != nil {
		return "spec.steps[0].env" + m[1]
	}
	switch field {
	case "type":
		return "metadata.annotations." + domain.AnnotationType
	case "status":
		return "metadata.annotations." + domain.AnnotationStatus
	case "labels", "annotations":
		return "metadata." + field
	}
	if strings.HasPrefix(field, "annotations.") {
		return "metadata." + field
	}
	return field
}

var unknownField = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// parse decodes strictly and converts. Problems are the caller's to fix (400); decoded is
// false when the body is not a YAML mapping at all, so nothing else can be judged.
func parse(body []byte) (t domain.Task, problems []apperr.FieldError, decoded bool, err error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return domain.Task{}, nil, false, apperr.New(apperr.RequestInvalid, "A task body is required.")
	}
	dec := yaml.NewDecoder(bytes.NewReader(body))
	dec.KnownFields(true)
	var doc document
	if err := dec.Decode(&doc); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return domain.Task{}, []apperr.FieldError{{Field: "body", Message: strings.TrimPrefix(err.Error(), "yaml: ")}}, false, nil
		}
		for _, msg := range te.Errors {
			if m := unknownField.FindStringSubmatch(msg); m != nil {
				where := places[m[3]]
				if where == "" {
					where = m[3]
				}
				problems = append(problems, apperr.FieldError{
					Field:   strings.TrimPrefix(where+"."+m[2], "the Task."),
					Message: fmt.Sprintf("line %s: not a field of a one-step Tekton Task that Baton runs", m[1]),
				})
				continue
			}
			problems = append(problems, apperr.FieldError{Field: "body", Message: msg})
		}
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		problems = append(problems, apperr.FieldError{Field: "body", Message: "exactly one YAML document is expected"})
	}
	problems = append(problems, check(doc)...)
	t, convProblems := doc.task()
	return t, append(problems, convProblems...), true, nil
}

// check applies Tekton's own rules for the fields of the schema.
func check(doc document) []apperr.FieldError {
	var errs []apperr.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, apperr.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if doc.APIVersion != APIVersionV1 && doc.APIVersion != APIVersionV1Beta1 {
		add("apiVersion", "must be %s or %s", APIVersionV1Beta1, APIVersionV1)
	}
	if doc.Kind != Kind {
		add("kind", "must be Task")
	}
	if doc.Metadata.Name == "" {
		add("metadata.name", "required")
	}
	if len(doc.Spec.Steps) != 1 {
		add("spec.steps", "exactly one step is required, found %d", len(doc.Spec.Steps))
	}
	for i, p := range doc.Spec.Params {
		field := fmt.Sprintf("spec.params[%d]", i)
		typ := p.effectiveType()
		if !slices.Contains([]string{typeString, typeArray, typeObject}, typ) {
			add(field+".type", "must be string, array or object")
			continue
		}
		if p.Default != nil && p.Default.Type != typ {
			add(field+".default", "is %s but the parameter's type is %s", article(p.Default.Type), typ)
		}
		checkProperties(add, field, typ, p.Properties)
		if typ == typeObject && p.Default != nil {
			for k := range p.Default.Object {
				if _, ok := p.Properties[k]; !ok {
					add(field+".default."+k, "is not one of the declared properties")
				}
			}
		}
	}
	for i, r := range doc.Spec.Results {
		field := fmt.Sprintf("spec.results[%d]", i)
		typ := r.Type
		if typ == "" {
			typ = typeString
		}
		if !slices.Contains([]string{typeString, typeArray, typeObject}, typ) {
			add(field+".type", "must be string, array or object")
			continue
		}
		checkProperties(add, field, typ, r.Properties)
	}
	return errs
}

func checkProperties(add func(string, string, ...any), field, typ string, props map[string]property) {
	if typ == typeObject && len(props) == 0 {
		add(field+".properties", "required for an object")
	}
	if typ != typeObject && len(props) > 0 {
		add(field+".properties", "only an object has properties")
	}
	for k, prop := range props {
		if prop.Type != "" && prop.Type != typeString {
			add(field+".properties."+k+".type", "must be string")
		}
	}
}

func article(typ string) string {
	if typ == typeArray || typ == typeObject {
		return "an " + typ
	}
	return "a " + typ
}

// effectiveType is the parameter's type as Tekton defaults it: from the default's shape
// when not given, else string.
func (p param) effectiveType() string {
	switch {
	case p.Type != "":
		return p.Type
	case p.Default != nil:
		return p.Default.Type
	}
	return typeString
}

// task converts the document, taking Baton's fields out of their annotations.
func (doc document) task() (domain.Task, []apperr.FieldError) {
	var errs []apperr.FieldError
	bad := func(key, msg string) {
		errs = append(errs, apperr.FieldError{Field: "metadata.annotations." + key, Message: msg})
	}
	ann := maps.Clone(doc.Metadata.Annotations)
	pop := func(key string) (string, bool) {
		v, ok := ann[key]
		delete(ann, key)
		return v, ok
	}
	popJSON := func(key string, into any) bool {
		v, ok := pop(key)
		if !ok {
			return false
		}
		if err := json.Unmarshal([]byte(v), into); err != nil {
			bad(key, "not valid JSON of the expected shape: "+err.Error())
			return false
		}
		return true
	}

	t := domain.Task{Name: doc.Metadata.Name, Description: doc.Spec.Description, DisplayName: doc.Spec.DisplayName}
	if len(doc.Metadata.Labels) > 0 {
		t.Labels = doc.Metadata.Labels
	}
	if v, ok := pop(domain.AnnotationDisplayName); ok {
		t.DisplayName = v
	}
	t.Icon, _ = pop(domain.AnnotationIcon)
	t.Category, _ = pop(domain.AnnotationCategory)
	t.Type, _ = pop(domain.AnnotationType)
	if v, ok := pop(domain.AnnotationStatus); ok {
		t.Status = domain.Status(v)
	}
	if v, ok := pop(domain.AnnotationVerified); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(domain.AnnotationVerified, "must be true or false")
		}
		t.Verified = b
	}
	if v, ok := pop(domain.AnnotationVersion); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			bad(domain.AnnotationVersion, "must be a positive integer")
		}
		t.Version = n
	}
	if v, ok := pop(domain.AnnotationScope); ok {
		t.Scope = domain.Scope(v)
	}
	t.Team, _ = pop(domain.AnnotationTeam)
	if v, ok := pop(domain.AnnotationCreationDate); ok {
		d, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			bad(domain.AnnotationCreationDate, "not an RFC 3339 time")
		}
		t.CreationDate = d.UTC()
	}
	var cl taskjson.Changelog
	if popJSON(domain.AnnotationChangelog, &cl) {
		t.Changelog = domain.Changelog{Author: cl.Author, Reason: cl.Reason}
		if cl.Date != "" {
			d, err := time.Parse(time.RFC3339Nano, cl.Date)
			if err != nil {
				bad(domain.AnnotationChangelog, "date is not an RFC 3339 time")
			}
			t.Changelog.Date = d.UTC()
		}
	}
	popJSON(domain.AnnotationExtra, &t.Extra)
	var specExtra map[string]json.RawMessage
	popJSON(domain.AnnotationSpecExtra, &specExtra)
	var jsonAnn map[string]json.RawMessage
	popJSON(domain.AnnotationJSON, &jsonAnn)
	var uiParams []taskjson.Param
	popJSON(domain.AnnotationParams, &uiParams)
	var uiResults []taskjson.Result
	popJSON(domain.AnnotationResults, &uiResults)

	for k, v := range ann {
		if t.Annotations == nil {
			t.Annotations = map[string]json.RawMessage{}
		}
		raw, _ := json.Marshal(v)
		t.Annotations[k] = raw
	}
	for k, v := range jsonAnn {
		if t.Annotations == nil {
			t.Annotations = map[string]json.RawMessage{}
		}
		t.Annotations[k] = v
	}

	t.Spec.Extra = specExtra
	if len(doc.Spec.Steps) > 0 {
		s := doc.Spec.Steps[0]
		t.Spec.Image, t.Spec.Command, t.Spec.Arguments = s.Image, s.Command, s.Args
		t.Spec.Script, t.Spec.WorkingDir = s.Script, s.WorkingDir
		if s.Name != domain.DefaultStepName {
			t.Spec.StepName = s.Name
		}
		for _, e := range s.Env {
			t.Spec.Envs = append(t.Spec.Envs, domain.Env(e))
		}
	}
	for _, p := range doc.Spec.Params {
		var def *domain.Param
		if i := slices.IndexFunc(uiParams, func(u taskjson.Param) bool { return u.Name == p.Name }); i >= 0 {
			d := taskjson.ParamDomain(uiParams[i])
			def = &d
		}
		t.Spec.Params = append(t.Spec.Params, paramFromTekton(p, def))
	}
	for _, r := range doc.Spec.Results {
		var def *domain.Result
		if i := slices.IndexFunc(uiResults, func(u taskjson.Result) bool { return u.Name == r.Name }); i >= 0 {
			d := taskjson.ResultDomain(uiResults[i])
			def = &d
		}
		t.Spec.Results = append(t.Spec.Results, resultFromTekton(r, def))
	}
	for _, w := range doc.Spec.Workspaces {
		t.Spec.Workspaces = append(t.Spec.Workspaces, domain.Workspace(w))
	}
	return t, errs
}

// uiTypes are the AbstractParam types a Tekton parameter gets when no definition says.
var uiTypes = map[string]string{typeString: "text", typeArray: "multiselect", typeObject: "json"}

// paramFromTekton converts a Tekton parameter. def is the parameter's definition from
// the `baton.io/params` annotation: it supplies what Tekton has no place for, while what
// Tekton does hold (name, description, type, default, properties) comes from the
// parameter, so an edit of the YAML itself takes effect.
func paramFromTekton(tp param, def *domain.Param) domain.Param {
	typ := tp.effectiveType()
	var p domain.Param
	if def != nil {
		p = *def
		p.Extra = maps.Clone(def.Extra)
		if tektonParam(p).effectiveType() != typ {
			p.Type = uiTypes[typ]
		}
	} else {
		p = domain.Param{Type: uiTypes[typ], Required: tp.Default == nil}
	}
	p.Name, p.Description = tp.Name, tp.Description
	delete(p.Extra, propertiesKey)
	if len(tp.Properties) > 0 {
		raw, _ := json.Marshal(tp.Properties)
		if p.Extra == nil {
			p.Extra = map[string]json.RawMessage{}
		}
		p.Extra[propertiesKey] = raw
	}
	if len(p.Extra) == 0 {
		p.Extra = nil
	}
	switch {
	case tp.Default == nil && def != nil && tektonParam(*def).Default == nil:
		// The definition's default has no Tekton form; keep it.
	case tp.Default == nil:
		p.Default = nil
	case def != nil && sameValue(tektonParam(*def).Default, tp.Default):
		// Unchanged: keep the definition's default with its JSON type (5, not "5").
	default:
		p.Default = jsonValue(*tp.Default)
	}
	return p
}

// tektonParam is the Tekton form of a parameter: an array for a multiselect, an object
// when it declares properties, else a string; the default in that shape when it has one.
func tektonParam(p domain.Param) param {
	tp := param{Name: p.Name, Description: p.Description, Type: typeString}
	var props map[string]property
	if raw, ok := p.Extra[propertiesKey]; ok && json.Unmarshal(raw, &props) == nil && len(props) > 0 {
		tp.Type, tp.Properties = typeObject, props
	} else if p.Type == "multiselect" {
		tp.Type = typeArray
	}
	if domain.IsAbsent(p.Default) {
		return tp
	}
	switch tp.Type {
	case typeArray:
		var a []string
		if json.Unmarshal(p.Default, &a) == nil {
			tp.Default = &value{Type: typeArray, Array: a}
		}
	case typeObject:
		var o map[string]string
		if json.Unmarshal(p.Default, &o) == nil {
			tp.Default = &value{Type: typeObject, Object: o}
		}
	default:
		var s string
		if json.Unmarshal(p.Default, &s) != nil {
			s = string(p.Default) // numbers, booleans, objects: their JSON text
		}
		tp.Default = &value{Type: typeString, String: s}
	}
	return tp
}

func sameValue(a, b *value) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Type == b.Type && a.String == b.String && slices.Equal(a.Array, b.Array) && maps.Equal(a.Object, b.Object)
}

func jsonValue(v value) json.RawMessage {
	var raw []byte
	switch v.Type {
	case typeArray:
		raw, _ = json.Marshal(v.Array)
	case typeObject:
		raw, _ = json.Marshal(v.Object)
	default:
		raw, _ = json.Marshal(v.String)
	}
	return raw
}

// resultFromTekton converts a Tekton result, with its definition from `baton.io/results`
// supplying fields Tekton has no place for.
func resultFromTekton(tr result, def *domain.Result) domain.Result {
	r := domain.Result{}
	if def != nil {
		r.Extra = maps.Clone(def.Extra)
	}
	r.Name, r.Description, r.Type = tr.Name, tr.Description, tr.Type
	delete(r.Extra, propertiesKey)
	if len(tr.Properties) > 0 {
		raw, _ := json.Marshal(tr.Properties)
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[propertiesKey] = raw
	}
	if len(r.Extra) == 0 {
		r.Extra = nil
	}
	return r
}

func tektonResult(r domain.Result) result {
	tr := result{Name: r.Name, Description: r.Description, Type: r.Type}
	var props map[string]property
	if raw, ok := r.Extra[propertiesKey]; ok && json.Unmarshal(raw, &props) == nil {
		tr.Properties = props
	}
	return tr
}

// Encode writes t as Tekton YAML.
func Encode(t domain.Task) ([]byte, error) {
	doc, err := fromTask(t)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("encode task %s as YAML: %w", t.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode task %s as YAML: %w", t.Name, err)
	}
	return b.Bytes(), nil
}

func fromTask(t domain.Task) (document, error) {
	ann := map[string]string{}
	setJSON := func(key string, v any) error {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s: %w", key, err)
		}
		ann[key] = string(raw)
		return nil
	}
	nonString := map[string]json.RawMessage{}
	for k, v := range t.Annotations {
		var s string
		if json.Unmarshal(v, &s) == nil {
			ann[k] = s
		} else {
			nonString[k] = v
		}
	}
	if len(nonString) > 0 {
		if err := setJSON(domain.AnnotationJSON, nonString); err != nil {
			return document{}, err
		}
	}
	set := func(key, v string) {
		if v != "" {
			ann[key] = v
		}
	}
	set(domain.AnnotationDisplayName, t.DisplayName)
	set(domain.AnnotationIcon, t.Icon)
	set(domain.AnnotationCategory, t.Category)
	set(domain.AnnotationType, t.Type)
	set(domain.AnnotationStatus, string(t.Status))
	if t.Verified {
		ann[domain.AnnotationVerified] = "true"
	}
	if t.Version > 0 {
		ann[domain.AnnotationVersion] = strconv.Itoa(t.Version)
	}
	set(domain.AnnotationScope, string(t.Scope))
	set(domain.AnnotationTeam, t.Team)
	if !t.CreationDate.IsZero() {
		ann[domain.AnnotationCreationDate] = t.CreationDate.UTC().Format(taskjson.TimeFormat)
	}
	if t.Changelog != (domain.Changelog{}) {
		if err := setJSON(domain.AnnotationChangelog, taskjson.FromDomain(t).Changelog); err != nil {
			return document{}, err
		}
	}
	if len(t.Extra) > 0 {
		if err := setJSON(domain.AnnotationExtra, t.Extra); err != nil {
			return document{}, err
		}
	}
	if len(t.Spec.Extra) > 0 {
		if err := setJSON(domain.AnnotationSpecExtra, t.Spec.Extra); err != nil {
			return document{}, err
		}
	}

	s := t.Spec
	doc := document{
		APIVersion: APIVersionV1, Kind: Kind,
		Metadata: metadata{Name: t.Name, Labels: t.Labels},
		Spec:     taskSpec{Description: t.Description},
	}
	st := step{
		Name: s.StepName, Image: s.Image, Command: s.Command, Args: s.Arguments,
		WorkingDir: s.WorkingDir, Script: s.Script,
	}
	if st.Name == "" {
		st.Name = domain.DefaultStepName
	}
	for _, e := range s.Envs {
		st.Env = append(st.Env, envVar(e))
	}
	doc.Spec.Steps = []step{st}

	// A parameter's definition travels in the annotation only when the Tekton parameter
	// alone would not give it back.
	var uiParams []taskjson.Param
	needParams := false
	for _, p := range s.Params {
		tp := tektonParam(p)
		doc.Spec.Params = append(doc.Spec.Params, tp)
		uiParams = append(uiParams, taskjson.ParamFromDomain(p))
		if !sameJSON(taskjson.ParamFromDomain(paramFromTekton(tp, nil)), taskjson.ParamFromDomain(p)) {
			needParams = true
		}
	}
	if needParams {
		if err := setJSON(domain.AnnotationParams, uiParams); err != nil {
			return document{}, err
		}
	}
	var uiResults []taskjson.Result
	needResults := false
	for _, r := range s.Results {
		tr := tektonResult(r)
		doc.Spec.Results = append(doc.Spec.Results, tr)
		jr := taskjson.FromDomain(domain.Task{Spec: domain.Spec{Results: []domain.Result{r}}}).Spec.Results[0]
		uiResults = append(uiResults, jr)
		back := taskjson.FromDomain(domain.Task{Spec: domain.Spec{Results: []domain.Result{resultFromTekton(tr, nil)}}}).Spec.Results[0]
		if !sameJSON(back, jr) {
			needResults = true
		}
	}
	if needResults {
		if err := setJSON(domain.AnnotationResults, uiResults); err != nil {
			return document{}, err
		}
	}
	for _, w := range s.Workspaces {
		doc.Spec.Workspaces = append(doc.Spec.Workspaces, workspace(w))
	}
	if len(ann) > 0 {
		doc.Metadata.Annotations = ann
	}
	return doc, nil
}

func sameJSON(a, b any) bool {
	ra, errA := json.Marshal(a)
	rb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ra, rb)
}
