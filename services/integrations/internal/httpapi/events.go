package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/events"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/jsonbody"
	"github.com/baton-flow/baton/services/integrations/internal/app"
)

// headerSpecVersion marks a binary-mode CloudEvent: its attributes are `ce-*` headers.
const headerSpecVersion = "Ce-Specversion"

// event starts the runs of a CloudEvent, or of a batch of them, and answers the run (201
// with its Location when the event created it, 200 when it was seen before), or the list
// of runs of a batch (201 when any was created).
func (h *handlers) event(c *fiber.Ctx) error {
	if err := authenticated(c); err != nil {
		return err
	}
	evs, batch, err := readEvents(c)
	if err != nil {
		return err
	}
	got, err := h.Events.Accept(c.UserContext(), c.Query("ref"), evs)
	if err != nil {
		return err
	}
	if !batch {
		return answerRun(c, got[0])
	}
	runs := make([]*events.WorkflowRun, len(got))
	status := fiber.StatusOK
	for i, a := range got {
		runs[i] = a.Run
		if a.Created {
			status = fiber.StatusCreated
		}
	}
	return c.Status(status).JSON(runs)
}

// plainWebhook starts a run of the workflow `ref` names with param `data` = the JSON
// body (required: any JSON value; another content type answers 415). An Idempotency-Key
// header makes a delivery sent again answer its first run (200).
func (h *handlers) plainWebhook(c *fiber.Ctx) error {
	// Without a ref it is no kind of webhook at all, whoever sends it: /webhook is open
	// to chat and code-host deliveries, so that is said before credentials are asked for.
	if c.Query("ref") == "" {
		return apperr.New(apperr.RequestInvalid,
			"A webhook names its workflow with ref=<team>/<workflow>, or is a chat or code-host delivery, told by its headers.")
	}
	if err := authenticated(c); err != nil {
		return err
	}
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.New(apperr.RequestInvalid, "A webhook's body is required: any JSON value, the run's param data.")
	}
	if ct := c.Get(fiber.HeaderContentType); !httpx.IsJSON(ct) {
		return apperr.New(apperr.UnsupportedMediaType, "Content-Type %q is not supported; a webhook's body is JSON.", ct)
	}
	data, err := app.DecodeJSON(body)
	if err != nil {
		return err
	}
	got, err := h.Events.Webhook(c.UserContext(), c.Query("ref"), data, c.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	return answerRun(c, got)
}

// authenticated refuses (401) a request without credentials before its body is read.
func authenticated(c *fiber.Ctx) error {
	if p, ok := auth.FromContext(c.UserContext()); !ok || p.Type == auth.TypeAnonymous {
		return apperr.New(apperr.Unauthenticated, "Authentication is required.")
	}
	return nil
}

func answerRun(c *fiber.Ctx, a app.Accepted) error {
	if !a.Created {
		return c.JSON(a.Run)
	}
	return httpx.Created(c, "/api/v2/team/"+a.Run.Team+"/workflowrun/"+a.Run.ID, a.Run)
}

// readEvents reads the request's CloudEvents with the CloudEvents SDK: a batch
// (application/cloudevents-batch+json), one event in structured mode
// (application/cloudevents+json, or application/json whose body has `specversion`), or
// one in binary mode (`ce-*` headers, the body as its data). batch says which was sent.
func readEvents(c *fiber.Ctx) (evs []event.Event, batch bool, err error) {
	body := c.Body()
	header := http.Header{}
	c.Request().Header.VisitAll(func(k, v []byte) { header.Add(string(k), string(v)) })
	ct := header.Get(fiber.HeaderContentType)
	mt, _, _ := mime.ParseMediaType(ct)
	mt = strings.ToLower(mt)
	binary := header.Get(headerSpecVersion) != ""

	switch {
	case mt == event.ApplicationCloudEventsBatchJSON:
		if err := jsonBody(body); err != nil {
			return nil, true, err
		}
		msg := cehttp.NewMessage(header, io.NopCloser(bytes.NewReader(body)))
		evs, err := binding.ToEvents(c.UserContext(), msg, msg.BodyReader)
		if err != nil {
			return nil, true, apperr.Wrap(apperr.RequestInvalid, err, "The batch is not a list of CloudEvents: %s.", strings.TrimSpace(err.Error()))
		}
		return evs, true, nil
	case mt == event.ApplicationCloudEventsJSON:
	case binary:
		// The data's depth is the use case's to bound, by its content type.
	case httpx.IsJSON(ct):
		if err := jsonBody(body); err != nil {
			return nil, false, err
		}
		var probe struct {
			SpecVersion *string `json:"specversion"`
		}
		if json.Unmarshal(body, &probe) != nil || probe.SpecVersion == nil {
			return nil, false, apperr.New(apperr.RequestInvalid,
				"The body is not a CloudEvent: send it in structured mode (application/cloudevents+json, or JSON with specversion), in binary mode (ce-* headers) or as a batch (application/cloudevents-batch+json).")
		}
		header.Set(fiber.HeaderContentType, event.ApplicationCloudEventsJSON)
	default:
		return nil, false, apperr.New(apperr.UnsupportedMediaType,
			"Content-Type %q is not a CloudEvent's: send application/cloudevents+json, application/cloudevents-batch+json, or ce-* headers with the data.", ct)
	}
	if !binary {
		if err := jsonBody(body); err != nil {
			return nil, false, err
		}
	}
	ev, err := binding.ToEvent(c.UserContext(), cehttp.NewMessage(header, io.NopCloser(bytes.NewReader(body))))
	if err != nil {
		return nil, false, apperr.Wrap(apperr.RequestInvalid, err, "The body is not a valid CloudEvent: %s.", strings.TrimSpace(err.Error()))
	}
	return []event.Event{*ev}, false, nil
}

// jsonBody refuses an empty body and one nested deeper than the service reads.
func jsonBody(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apperr.New(apperr.RequestInvalid, "A CloudEvent is required in the body.")
	}
	if err := httpx.CheckDepth(body); err != nil {
		return err
	}
	// The SDK reads the first JSON value of a body and drops the rest; the rest is refused.
	if err := jsonbody.Check(body); err != nil {
		return apperr.Wrap(apperr.RequestInvalid, err, "The body is not one JSON value: %s.", err.Error())
	}
	return nil
}
