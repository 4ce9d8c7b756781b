package httpapi

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/apperr"
	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/page"
	"github.com/baton-flow/baton/services/tasks/internal/app"
	"github.com/baton-flow/baton/services/tasks/internal/domain"
	"github.com/baton-flow/baton/services/tasks/internal/taskjson"
	"github.com/baton-flow/baton/services/tasks/internal/tekton"
)

type handlers struct {
	tasks *app.Tasks
}

// refOf reads which task a path names.
type refOf func(c *fiber.Ctx) domain.Ref

func teamRef(c *fiber.Ctx) domain.Ref   { return domain.TeamRef(c.Params("team"), c.Params("name")) }
func globalRef(c *fiber.Ctx) domain.Ref { return domain.GlobalRef(c.Params("name")) }

// yamlTypes are the media types read and written as Tekton YAML.
var yamlTypes = []string{tekton.ContentType, "application/yaml", "text/yaml", "text/x-yaml"}

func isYAML(c *fiber.Ctx) bool {
	mt, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	for _, t := range yamlTypes {
		if mt == t {
			return true
		}
	}
	return false
}

// decodeTask reads a task body: YAML by Content-Type, else JSON.
func decodeTask(c *fiber.Ctx) (domain.Task, error) {
	if isYAML(c) {
		t, err := tekton.Decode(c.Body())
		if err != nil {
			return domain.Task{}, err
		}
		// The YAML form carries JSON in annotations; what it decodes to is bounded as a
		// JSON body is at the gateway.
		if raw, err := json.Marshal(t); err == nil {
			if err := httpx.CheckDepth(raw); err != nil {
				return domain.Task{}, err
			}
		}
		return t, nil
	}
	if err := httpx.CheckDepth(c.Body()); err != nil {
		return domain.Task{}, err
	}
	ct := strings.ToLower(c.Get(fiber.HeaderContentType))
	if ct != "" && !strings.Contains(ct, "json") {
		return domain.Task{}, apperr.New(apperr.UnsupportedMediaType,
			"Content-Type %q is not supported; send application/json or %s.", ct, tekton.ContentType)
	}
	return taskjson.Decode(c.Body())
}

// render answers with t as YAML when Accept prefers it, else JSON.
func render(c *fiber.Ctx, status int, t domain.Task) error {
	offers := append([]string{fiber.MIMEApplicationJSON}, yamlTypes...)
	if accepted := c.Accepts(offers...); accepted != "" && accepted != fiber.MIMEApplicationJSON {
		body, err := tekton.Encode(t)
		if err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, tekton.ContentType)
		return c.Status(status).Send(body)
	}
	return c.Status(status).JSON(taskjson.FromDomain(t))
}

func (h *handlers) create(ref refOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		in, err := decodeTask(c)
		if err != nil {
			return err
		}
		t, err := h.tasks.Create(c.UserContext(), ref(c), in)
		if err != nil {
			return err
		}
		c.Location(strings.TrimSuffix(c.Path(), "/") + "/" + t.Name)
		return render(c, http.StatusCreated, t)
	}
}

func (h *handlers) put(ref refOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		replace, err := httpx.Bool(c, "replace", false)
		if err != nil {
			return err
		}
		dryRun, err := httpx.Bool(c, "dryRun", false)
		if err != nil {
			return err
		}
		in, err := decodeTask(c)
		if err != nil {
			return err
		}
		t, created, err := h.tasks.Save(c.UserContext(), ref(c), in, app.SaveMode{Replace: replace, DryRun: dryRun})
		if err != nil {
			return err
		}
		if created {
			if !dryRun {
				c.Location(c.Path())
			}
			return render(c, http.StatusCreated, t)
		}
		return render(c, http.StatusOK, t)
	}
}

// version reads `version`: 0 (the latest) when absent, else a positive integer.
func version(c *fiber.Ctx) (int, error) {
	v, err := httpx.Int(c, "version", 0)
	if err != nil {
		return 0, err
	}
	if c.Query("version") != "" && v < 1 {
		return 0, apperr.Invalid(apperr.QueryInvalidFilters, "version must be 1 or more.",
			apperr.FieldError{Field: "version", Message: "must be 1 or more"})
	}
	return v, nil
}

func (h *handlers) get(ref refOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		v, err := version(c)
		if err != nil {
			return err
		}
		t, err := h.tasks.Task(c.UserContext(), ref(c), v)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, t)
	}
}

func (h *handlers) changelog(ref refOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		history, err := h.tasks.Changelog(c.UserContext(), ref(c))
		if err != nil {
			return err
		}
		return c.JSON(taskjson.Changelogs(history))
	}
}

func (h *handlers) delete(c *fiber.Ctx) error {
	if err := h.tasks.Delete(c.UserContext(), teamRef(c)); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

func (h *handlers) validate(ref refOf) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if !isYAML(c) {
			return apperr.New(apperr.UnsupportedMediaType, "Validation takes a Tekton Task as %s.", tekton.ContentType)
		}
		if err := h.tasks.Validate(c.UserContext(), ref(c), c.Body()); err != nil {
			return err
		}
		return c.SendStatus(http.StatusNoContent)
	}
}

// queryParams reads a search: paging (limit default 1000), `sort` as the direction on the
// creation date (ascending by default), labels, statuses and names.
func queryParams(c *fiber.Ctx) (domain.Filter, page.Request, error) {
	pr, err := httpx.Paging(c, page.MaxSize)
	if err != nil {
		return domain.Filter{}, page.Request{}, err
	}
	if pr.Desc, err = httpx.Direction(c, "sort", false); err != nil {
		return domain.Filter{}, page.Request{}, err
	}
	pr.Sort = "creationDate"
	labels, err := httpx.Labels(c)
	if err != nil {
		return domain.Filter{}, page.Request{}, err
	}
	f := domain.Filter{Labels: labels, Names: httpx.List(c, "names")}
	for _, s := range httpx.List(c, "statuses") {
		f.Statuses = append(f.Statuses, domain.Status(s))
	}
	return f, pr, nil
}

func renderPage(c *fiber.Ctx, p page.Page[domain.Task]) error {
	return c.JSON(page.Map(p, taskjson.FromDomain))
}

func (h *handlers) queryTeam(c *fiber.Ctx) error {
	f, pr, err := queryParams(c)
	if err != nil {
		return err
	}
	p, err := h.tasks.QueryTeam(c.UserContext(), c.Params("team"), f, pr)
	if err != nil {
		return err
	}
	return renderPage(c, p)
}

func (h *handlers) queryGlobal(c *fiber.Ctx) error {
	f, pr, err := queryParams(c)
	if err != nil {
		return err
	}
	p, err := h.tasks.QueryGlobal(c.UserContext(), httpx.List(c, "teams"), f, pr)
	if err != nil {
		return err
	}
	return renderPage(c, p)
}
