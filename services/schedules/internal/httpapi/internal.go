package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"github.com/baton-flow/baton/libs/httpx"
	"github.com/baton-flow/baton/libs/schedulesapi"
	"github.com/baton-flow/baton/services/schedules/internal/app"
	"github.com/baton-flow/baton/services/schedules/internal/domain"
)

// InternalRoutes registers the endpoints Baton's own services call, on r (/internal/v1),
// which already verifies the signed principal and admits only Baton's own services.
// libs/schedulesapi is their contract:
//
//	POST /internal/v1/teams/{team}/schedules  schedulesapi.CreateSchedule → schedulesapi.CreatedSchedule (runs)
func InternalRoutes(r fiber.Router, schedules *app.Schedules) {
	h := &handlers{schedules: schedules}
	r.Post(schedulesapi.CreateScheduleRoute, h.createRunOnce)
}

func (h *handlers) createRunOnce(c *fiber.Ctx) error {
	var b schedulesapi.CreateSchedule
	if err := httpx.DecodeJSON(c, &b); err != nil {
		return err
	}
	by := b.CreatedBy
	sch, created, err := h.schedules.CreateRunOnce(c.UserContext(), c.Params("team"), app.RunOnce{
		Key: b.Key,
		Schedule: domain.Schedule{Workflow: b.WorkflowRef, Name: b.Name, Description: b.Description, Date: b.Date.UTC(),
			Timezone: b.Timezone, Params: b.Params, Labels: b.Labels},
		Secret:    b.Secret,
		CreatedBy: domain.Initiator{Type: by.Type, ID: by.ID, Name: by.Name, Person: by.Person},
	})
	if err != nil {
		return err
	}
	return c.JSON(schedulesapi.CreatedSchedule{ID: sch.ID, Date: sch.Date, TriggerDisabled: sch.TriggerDisabled, Created: created})
}
