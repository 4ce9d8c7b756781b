package httpapi

import (
	"bytes"
	"encoding/json"
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/identityapi"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/libs/param"
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

// ParamInternalRoutes registers, on r (/internal/v1, Baton's services only):
//
//	GET /parameters → 200 identityapi.GlobalParameters: the global parameters' names
func ParamInternalRoutes(r fiber.Router, params *app.Params) {
	h := &paramHandlers{params: params}
	r.Get(identityapi.ParametersRoute, h.names)
}

// AbstractParam is a global parameter, in and out (libs/param): value and default may be
// any JSON value, and v4's names (`key`, `defaultValue`, `helperText`) are read and
// answered beside Baton's. A password's value and default are never shown: they read
// "********" when set.
type AbstractParam = param.Param

// ParamOption is one choice of a select or multiselect parameter or setting.
type ParamOption = param.Option

// paramFromJSON converts a request's parameter; values keep full number precision.
func paramFromJSON(r AbstractParam) (domain.Param, error) {
	defVal, err := jsonValue("default", r.Default)
	if err != nil {
		return domain.Param{}, err
	}
	value, err := jsonValue("value", r.Value)
	if err != nil {
		return domain.Param{}, err
	}
	opts := make([]domain.Option, len(r.Options))
	for i, o := range r.Options {
		opts[i] = domain.Option(o)
	}
	return domain.Param{
		Name: r.Name, Label: r.Label, Description: r.Description, Type: domain.ParamType(r.Type),
		Default: defVal, Value: value, Required: r.Required, Placeholder: r.Placeholder,
		HelperText: r.HelperText, Options: opts, MinValueLength: r.MinValueLength,
		MaxValueLength: r.MaxValueLength, ReadOnly: r.ReadOnly, HiddenValue: r.HiddenValue,
	}, nil
}

// jsonValue decodes one JSON value keeping numbers exact; absent and null are nil.
func jsonValue(field string, raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var v any
	if err := jsonbody.DecodeNumbers(raw, &v); err != nil {
		return nil, apperr.Invalid(apperr.RequestInvalid, "The "+field+" is not valid JSON.",
			apperr.FieldError{Field: field, Message: "not valid JSON"})
	}
	return v, nil
}

// paramView shows p, which the use cases return masked already.
func paramView(p domain.Param) (AbstractParam, error) {
	var opts []param.Option
	for _, o := range p.Options {
		opts = append(opts, param.Option(o))
	}
	p = p.Masked()
	def, err := rawJSON(p.Default)
	if err != nil {
		return AbstractParam{}, err
	}
	value, err := rawJSON(p.Value)
	if err != nil {
		return AbstractParam{}, err
	}
	return AbstractParam{
		Name: p.Name, Label: p.Label, Description: p.Description, Type: string(p.Type),
		Default: def, Value: value, Required: p.Required, Placeholder: p.Placeholder,
		HelperText: p.HelperText, Options: opts, MinValueLength: p.MinValueLength,
		MaxValueLength: p.MaxValueLength, ReadOnly: p.ReadOnly, HiddenValue: p.HiddenValue,
	}, nil
}

// rawJSON encodes a decoded JSON value; nil stays absent.
func rawJSON(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	return json.Marshal(v)
}

func (h *paramHandlers) listParams(c *fiber.Ctx) error {
	params, err := h.params.Params(c.UserContext())
	if err != nil {
		return err
	}
	out := make([]AbstractParam, len(params))
	for i, p := range params {
		if out[i], err = paramView(p); err != nil {
			return err
		}
	}
	return c.JSON(out)
}

func (h *paramHandlers) names(c *fiber.Ctx) error {
	names, err := h.params.Names(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(identityapi.GlobalParameters{Names: names})
}

func (h *paramHandlers) decodeParam(c *fiber.Ctx) (domain.Param, error) {
	var req AbstractParam
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return domain.Param{}, err
	}
	return paramFromJSON(req)
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
	view, err := paramView(out)
	if err != nil {
		return err
	}
	return httpx.Created(c, "/api/v2/parameters/"+url.PathEscape(out.Name), view)
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
	view, err := paramView(out)
	if err != nil {
		return err
	}
	if created {
		return httpx.Created(c, "/api/v2/parameters/"+url.PathEscape(out.Name), view)
	}
	return c.JSON(view)
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
