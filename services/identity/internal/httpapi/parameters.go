package httpapi

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// paramHandlers serve /parameters.
type paramHandlers struct {
	params *app.Params
}

// ParamRoutes registers the global parameter endpoints on r, which already authenticates
// callers.
func ParamRoutes(r fiber.Router, params *app.Params) {
	h := &paramHandlers{params: params}
	r.Get("/parameters", h.listParams)
	r.Post("/parameters", h.createParam)
	r.Put("/parameters", h.replaceParam)
	r.Delete("/parameters/:name", h.deleteParam)
}

// ParamOption is one choice of a select or multiselect parameter.
type ParamOption struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// AbstractParam is a parameter as the API shows it. A password's value and default are
// never shown: they read "********" when set.
type AbstractParam struct {
	Name           string        `json:"name"`
	Label          string        `json:"label,omitempty"`
	Description    string        `json:"description,omitempty"`
	Type           string        `json:"type"`
	Default        any           `json:"default,omitempty"`
	Value          any           `json:"value,omitempty"`
	Required       bool          `json:"required"`
	Placeholder    string        `json:"placeholder,omitempty"`
	HelperText     string        `json:"helpertext,omitempty"`
	Options        []ParamOption `json:"options,omitempty"`
	MinValueLength *int          `json:"minValueLength,omitempty"`
	MaxValueLength *int          `json:"maxValueLength,omitempty"`
	ReadOnly       bool          `json:"readOnly"`
	HiddenValue    bool          `json:"hiddenValue"`
}

// AbstractParamRequest is the body of POST and PUT /parameters. Value and default may be
// any JSON value; `defaultValue` and `helperText`, as v4 clients spell them, are accepted
// too.
type AbstractParamRequest struct {
	Name            string          `json:"name"`
	Label           string          `json:"label"`
	Description     string          `json:"description"`
	Type            string          `json:"type"`
	Default         json.RawMessage `json:"default"`
	DefaultValue    json.RawMessage `json:"defaultValue"`
	Value           json.RawMessage `json:"value"`
	Required        bool            `json:"required"`
	Placeholder     string          `json:"placeholder"`
	HelperText      string          `json:"helpertext"`
	HelperTextCamel string          `json:"helperText"`
	Options         []ParamOption   `json:"options"`
	MinValueLength  *int            `json:"minValueLength"`
	MaxValueLength  *int            `json:"maxValueLength"`
	ReadOnly        bool            `json:"readOnly"`
	HiddenValue     bool            `json:"hiddenValue"`
}

// param converts the request; values keep full number precision.
func (r AbstractParamRequest) param() (domain.Param, error) {
	def := r.Default
	if len(def) == 0 {
		def = r.DefaultValue
	}
	defVal, err := jsonValue("default", def)
	if err != nil {
		return domain.Param{}, err
	}
	value, err := jsonValue("value", r.Value)
	if err != nil {
		return domain.Param{}, err
	}
	helper := r.HelperText
	if helper == "" {
		helper = r.HelperTextCamel
	}
	opts := make([]domain.Option, len(r.Options))
	for i, o := range r.Options {
		opts[i] = domain.Option(o)
	}
	return domain.Param{
		Name: r.Name, Label: r.Label, Description: r.Description, Type: domain.ParamType(r.Type),
		Default: defVal, Value: value, Required: r.Required, Placeholder: r.Placeholder,
		HelperText: helper, Options: opts, MinValueLength: r.MinValueLength,
		MaxValueLength: r.MaxValueLength, ReadOnly: r.ReadOnly, HiddenValue: r.HiddenValue,
	}, nil
}

// jsonValue decodes one JSON value keeping numbers exact; absent and null are nil.
func jsonValue(field string, raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, apperr.Invalid(apperr.RequestInvalid, "The "+field+" is not valid JSON.",
			apperr.FieldError{Field: field, Message: "not valid JSON"})
	}
	return v, nil
}

// paramView shows p, which the use cases return masked already.
func paramView(p domain.Param) AbstractParam {
	var opts []ParamOption
	for _, o := range p.Options {
		opts = append(opts, ParamOption(o))
	}
	p = p.Masked()
	return AbstractParam{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: string(p.Type),
		Default: p.Default, Value: p.Value, Required: p.Required, Placeholder: p.Placeholder,
		HelperText: p.HelperText, Options: opts, MinValueLength: p.MinValueLength,
		MaxValueLength: p.MaxValueLength, ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
	}
}

func (h *paramHandlers) listParams(c *fiber.Ctx) error {
	params, err := h.params.Params(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]AbstractParam, len(params))
	for i, p := range params {
		out[i] = paramView(p)
	}
	return c.JSON(out)
}

func (h *paramHandlers) decodeParam(c *fiber.Ctx) (domain.Param, error) {
	var req AbstractParamRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return domain.Param{}, err
	}
	return req.param()
}

func (h *paramHandlers) createParam(c *fiber.Ctx) error {
	p, err := h.decodeParam(c)
	if err != nil {
		return err
	}
	out, err := h.params.CreateParam(c.UserContext(), p)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/parameters/"+url.PathEscape(out.Name), paramView(out))
}

func (h *paramHandlers) replaceParam(c *fiber.Ctx) error {
	p, err := h.decodeParam(c)
	if err != nil {
		return err
	}
	out, created, err := h.params.ReplaceParam(c.UserContext(), p)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, "/api/v2/parameters/"+url.PathEscape(out.Name), paramView(out))
	}
	return c.JSON(paramView(out))
}

func (h *paramHandlers) deleteParam(c *fiber.Ctx) error {
	name, err := url.PathUnescape(c.Params("name"))
	if err != nil {
		name = c.Params("name")
	}
	if err := h.params.DeleteParam(c.UserContext(), name); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}
