import { useQueryClient } from "@tanstack/react-query";
import { api, call, type Schemas } from "../../api/client";
import { ParametersPanel, type Param } from "./ParametersPanel";
import { teamKey } from "./team";

/** TeamParametersPanel is the team's parameters, read by its runs as $(team.params.<name>). */
export function TeamParametersPanel({ team, manage }: { team: Schemas["Team"]; manage: boolean }) {
  const client = useQueryClient();
  const name = team.name ?? "";
  return (
    <ParametersPanel
      params={(team.parameters ?? []) as Param[]}
      canEdit={manage}
      owner="the team"
      save={(p) => call(api.PATCH("/api/v2/team/{team}", { params: { path: { team: name } }, body: { parameters: [p] } }))}
      remove={(param) => call(api.DELETE("/api/v2/team/{team}/parameters/{name}", { params: { path: { team: name, name: param } } }))}
      onChanged={() => void client.invalidateQueries({ queryKey: teamKey(name) })}
    />
  );
}
