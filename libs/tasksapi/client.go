package tasksapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/auth"
	"github.com/baton-flow/baton/libs/peer"
	"github.com/baton-flow/baton/libs/registry"
)

// resolveTimeout bounds one resolve: a workflow's save waits on it, so a stuck tasks
// service must not hold it for long.
const resolveTimeout = 5 * time.Second

// Client calls the tasks service's internal endpoint, acting as the service self.
type Client struct {
	c    *peer.Client
	self auth.Principal
}

// New returns the client of the tasks service, calling as the service self.
func New(resolver registry.Resolver, signer *auth.Signer, self auth.Principal) *Client {
	return &Client{c: peer.New(Service, resolver, signer, 0), self: self}
}

// Resolve returns version of the task ref names (a global task's name, or `<team>/<task>`;
// the latest version when version is 0), within 5 s. A task or version the catalogue does
// not have is an error of reason TASK_NOT_FOUND; any other answer but 200 — a 404 for the
// route itself (a tasks service without the endpoint) included: that is no missing task —
// is an error of reason DEPENDENCY_UNAVAILABLE.
func (c *Client) Resolve(ctx context.Context, ref string, version int) (Task, error) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	q := url.Values{"ref": {ref}}
	if version > 0 {
		q.Set("version", strconv.Itoa(version))
	}
	var t Task
	a, err := c.c.Call(ctx, c.self, http.MethodGet, ResolvePath, q, nil, &t)
	switch {
	case err != nil:
		return Task{}, err
	case a.Status == http.StatusOK:
		return t, nil
	case a.Status == http.StatusNotFound && a.Reason != apperr.RouteNotFound.Name:
		return Task{}, apperr.New(apperr.TaskNotFound, "%s", cmp.Or(a.Message, fmt.Sprintf("Task '%s' was not found.", ref)))
	default:
		return Task{}, c.c.Unavailable(fmt.Errorf("resolve task %s: status %d %s", ref, a.Status, a.Reason))
	}
}
