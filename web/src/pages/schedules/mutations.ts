import { useMutation, useQueryClient } from "@tanstack/react-query";
import { notify } from "../actions/common";
import { api, call, type Schemas } from "../../api/client";
import { notifyError } from "../../api/ErrorAlert";

type Schedule = Schemas["WorkflowSchedule"];

/** useToggleSchedule enables or disables a schedule: the schedule written back with its status. */
export function useToggleSchedule(team: string) {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ s, enabled }: { s: Schedule; enabled: boolean }) =>
      call(
        api.PUT("/api/v2/team/{team}/schedule", {
          params: { path: { team } },
          body: { ...writable(s), status: enabled ? "active" : "inactive" },
        }),
      ),
    onSuccess: (s) => {
      notify("green", `${s.name || s.workflowRef} is ${s.status === "active" ? "enabled" : "disabled"}.`);
      void qc.invalidateQueries({ queryKey: ["schedules", team] });
    },
    onError: (e) => notifyError(e, "Not changed"),
  });
}

/** writable is a schedule without what the API answers but does not take. */
export function writable(s: Schedule): Schedule {
  const { triggerDisabled: _t, nextScheduleDate: _n, lastScheduleDate: _l, creationDate: _c, ...rest } = s;
  return rest as Schedule;
}
