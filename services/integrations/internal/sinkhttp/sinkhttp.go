// Package sinkhttp delivers CloudEvents to the HTTP sinks of settings with the CloudEvents
// SDK's HTTP protocol, in structured mode: one POST whose body is the whole event
// (application/cloudevents+json), which a sink can keep or forward as it is and any
// CloudEvents receiver reads.
package sinkhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/client"
	cecontext "github.com/cloudevents/sdk-go/v2/context"
	"github.com/cloudevents/sdk-go/v2/protocol"
	cehttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/baton-flow/baton/libs/events"
)

// maxAnswer bounds what is read of a sink's answer: only its status counts.
const maxAnswer = 16 << 10

// Sender is app.Sender over HTTP.
type Sender struct {
	client cloudevents.Client
}

// New returns a sender whose connections to each sink are kept open between events.
// Redirects are not followed: a sink answers 2xx or the attempt failed.
func New() (*Sender, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	tr.ResponseHeaderTimeout = time.Minute
	hc := http.Client{
		Transport:     boundedAnswers{tr},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	p, err := cehttp.New(cehttp.WithClient(hc))
	if err != nil {
		return nil, fmt.Errorf("cloudevents http protocol: %w", err)
	}
	c, err := cloudevents.New(p, cloudevents.WithForceStructured())
	if err != nil {
		return nil, fmt.Errorf("cloudevents client: %w", err)
	}
	return &Sender{client: c}, nil
}

// Send posts the event, given in structured JSON, to sink. The error never shows the
// sink's URL, which may carry a token.
func (s *Sender) Send(ctx context.Context, sink string, body []byte) error {
	e, err := events.Unmarshal(body)
	if err != nil {
		return err
	}
	target, err := url.Parse(sink)
	if err != nil {
		return errors.New("the sink's URL does not parse")
	}
	res := s.client.Send(cecontext.WithTarget(ctx, target.String()), e)
	if protocol.IsACK(res) {
		return nil
	}
	var answer *cehttp.Result
	if protocol.ResultAs(res, &answer) {
		return fmt.Errorf("the sink answered %d", answer.StatusCode)
	}
	var uerr *url.Error
	if errors.As(res, &uerr) {
		return fmt.Errorf("post to the sink: %w", uerr.Err)
	}
	return fmt.Errorf("post to the sink: %w", res)
}

// boundedAnswers reads at most maxAnswer bytes of an answer's body.
type boundedAnswers struct{ next http.RoundTripper }

func (b boundedAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := b.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = limitedBody{Reader: io.LimitReader(resp.Body, maxAnswer), Closer: resp.Body}
	return resp, nil
}

type limitedBody struct {
	io.Reader
	io.Closer
}
