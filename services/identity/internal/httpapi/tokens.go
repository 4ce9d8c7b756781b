package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/identity/internal/app"
	"github.com/baton-flow/baton/services/identity/internal/domain"
)

// tokenHandlers serve /token.
type tokenHandlers struct {
	tokens *app.Tokens
	now    func() time.Time
}

// TokenRoutes registers the token endpoints on r, which already authenticates callers.
func TokenRoutes(r fiber.Router, tokens *app.Tokens) {
	h := &tokenHandlers{tokens: tokens, now: time.Now}
	r.Post("/token", h.createToken)
	r.Get("/token/query", h.queryTokens)
	r.Delete("/token/:id", h.revokeToken)
}

// TokenCreateRequest is the body of POST /token.
type TokenCreateRequest struct {
	Type        string     `json:"type"`
	Name        string     `json:"name"`
	Principal   string     `json:"principal"`
	Description string     `json:"description"`
	Expiration  *tokenTime `json:"expirationDate"`
	Permissions []string   `json:"permissions"`
}

// TokenCreateResponse is the answer to POST /token: the only time the secret is shown.
type TokenCreateResponse struct {
	ID             string `json:"id"`
	Type           string `json:"type"`
	Token          string `json:"token"`
	ExpirationDate string `json:"expirationDate,omitempty"`
}

// Token is a token as the API shows it: never its secret, nor the hash of it.
type Token struct {
	ID             string   `json:"id"`
	Type           string   `json:"type"`
	Name           string   `json:"name,omitempty"`
	Description    string   `json:"description,omitempty"`
	Principal      string   `json:"principal,omitempty"`
	Permissions    []string `json:"permissions"`
	CreationDate   string   `json:"creationDate"`
	ExpirationDate string   `json:"expirationDate,omitempty"`
	Valid          bool     `json:"valid"`
	CreatedBy      string   `json:"createdBy,omitempty"`
	LastUsed       string   `json:"lastUsed,omitempty"`
}

func tokenTimeString(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(httpx.TimeFormat)
}

func tokenView(t domain.Token, now time.Time) Token {
	perms := t.Permissions
	if perms == nil {
		perms = []string{}
	}
	return Token{
		ID: t.ID, Type: string(t.Type), Name: t.Name, Description: t.Description, Principal: t.Principal,
		Permissions: perms, CreationDate: tokenTimeString(&t.CreationDate), ExpirationDate: tokenTimeString(t.ExpirationDate),
		Valid: t.Valid(now), CreatedBy: t.CreatedBy, LastUsed: tokenTimeString(t.LastUsed),
	}
}

// tokenTime is an expirationDate as clients send it: RFC 3339, a plain date (midnight UTC),
// or epoch milliseconds (seconds below 10^11, as elsewhere in the API).
type tokenTime struct{ time.Time }

func (t *tokenTime) UnmarshalJSON(raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] != '"' {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n < 0 {
			return errBadTokenTime
		}
		if n < 100_000_000_000 {
			t.Time = time.Unix(n, 0).UTC()
		} else {
			t.Time = time.UnixMilli(n).UTC()
		}
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return errBadTokenTime
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", time.DateOnly} {
		if parsed, err := time.Parse(layout, s); err == nil {
			t.Time = parsed.UTC()
			return nil
		}
	}
	return errBadTokenTime
}

var errBadTokenTime = errors.New("expirationDate must be an RFC 3339 date-time or epoch milliseconds")

func (h *tokenHandlers) createToken(c *fiber.Ctx) error {
	var req TokenCreateRequest
	if err := httpx.DecodeJSON(c, &req); err != nil {
		return tokenBodyError(err)
	}
	caller, _ := auth.FromContext(c.UserContext())
	r := domain.TokenRequest{
		Type: domain.TokenType(req.Type), Name: req.Name, Principal: req.Principal,
		Description: req.Description, Permissions: req.Permissions,
	}
	if req.Expiration != nil {
		r.ExpirationDate = &req.Expiration.Time
	}
	created, err := h.tokens.CreateToken(c.UserContext(), caller, r)
	if err != nil {
		return err
	}
	// The secret is in this answer and nowhere else: nothing on the way may keep it.
	c.Set(fiber.HeaderCacheControl, "no-store")
	return httpx.Created(c, "/api/v2/token/"+created.Token.ID, TokenCreateResponse{
		ID: created.Token.ID, Type: string(created.Token.Type), Token: created.Secret,
		ExpirationDate: tokenTimeString(created.Token.ExpirationDate),
	})
}

// tokenBodyError answers a body whose fields have the wrong shape as an invalid token
// request, naming the field; a body that is not JSON at all stays REQUEST_INVALID.
func tokenBodyError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		msg := fmt.Sprintf("%s has the wrong type.", typeErr.Field)
		return apperr.Invalid(apperr.TokenInvalidReq, msg, apperr.FieldError{Field: typeErr.Field, Message: msg})
	}
	if errors.Is(err, errBadTokenTime) {
		return apperr.Invalid(apperr.TokenInvalidReq, "The expiration date is not valid: "+errBadTokenTime.Error()+".",
			apperr.FieldError{Field: "expirationDate", Message: errBadTokenTime.Error()})
	}
	return err
}

func (h *tokenHandlers) queryTokens(c *fiber.Ctx) error {
	p, err := httpx.Paging(c, page.MaxSize)
	if err != nil {
		return err
	}
	if p.Desc, err = httpx.Direction(c, "order", false); err != nil {
		return err
	}
	if p.Sort, err = httpx.SortField(c, "sort", domain.TokenSortFields, "creationDate"); err != nil {
		return err
	}
	var f domain.TokenFilter
	// Unknown types simply match nothing (API.md §1).
	for _, t := range httpx.List(c, "types") {
		f.Types = append(f.Types, domain.TokenType(t))
	}
	f.Principals = httpx.List(c, "principals")
	if f.From, err = httpx.EpochMillis(c, "fromDate"); err != nil {
		return err
	}
	if f.To, err = httpx.EpochMillis(c, "toDate"); err != nil {
		return err
	}
	caller, _ := auth.FromContext(c.UserContext())
	res, err := h.tokens.FindTokens(c.UserContext(), caller, f, p)
	if err != nil {
		return err
	}
	now := h.now()
	return c.JSON(page.Map(res, func(t domain.Token) Token { return tokenView(t, now) }))
}

func (h *tokenHandlers) revokeToken(c *fiber.Ctx) error {
	caller, _ := auth.FromContext(c.UserContext())
	t, err := h.tokens.RevokeToken(c.UserContext(), caller, c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(tokenView(t, h.now()))
}
