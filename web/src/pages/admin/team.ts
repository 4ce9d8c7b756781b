import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { isAdmin, type Profile } from "../../api/profile";

export const teamKey = (team: string) => ["team", team] as const;

/** useTeam reads a team with its members, approver groups, parameters and quotas. */
export function useTeam(team: string) {
  return useQuery({
    queryKey: teamKey(team),
    queryFn: () => call(api.GET("/api/v2/team/{team}", { params: { path: { team } } })),
  });
}

/**
 * mayManage says whether the principal may change a team's members, approver groups and
 * parameters, as the API decides it: an admin, or a person who owns the team. Tokens of a
 * team, workflow or the instance never may (the API answers 403).
 */
export function mayManage(p: Profile | undefined, team: string): boolean {
  if (!p) return false;
  if (isAdmin(p)) return true;
  const person = p.principalType === undefined || p.principalType === "user" || p.principalType === "session";
  return person && (p.teams ?? []).some((t) => t.name === team && t.role === "owner");
}
