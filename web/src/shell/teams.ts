import { queryOptions, useQuery } from "@tanstack/react-query";
import { useParams } from "react-router";
import { api, call } from "../api/client";
import { isAdmin, useProfile } from "../api/profile";

export interface TeamChoice {
  name: string;
  displayName: string;
}

/** allTeamsQuery reads every team (for a principal with a global grant), by name. */
export const allTeamsQuery = queryOptions({
  queryKey: ["teams", "all"],
  queryFn: () => call(api.GET("/api/v2/team/query", { params: { query: { limit: 1000, sort: "name", order: "ASC" } } })),
  staleTime: 30_000,
});

/**
 * useTeams lists the teams the signed-in principal may switch to: every team for one with a
 * global grant (GET /team/query), else the teams its profile lists.
 */
export function useTeams() {
  const profile = useProfile();
  const admin = isAdmin(profile.data);
  const all = useQuery({ ...allTeamsQuery, enabled: admin });
  if (admin) {
    const teams: TeamChoice[] = (all.data?.content ?? []).map((t) => ({
      name: t.name ?? "",
      displayName: t.displayName || t.name || "",
    }));
    return { teams, isPending: all.isPending, error: all.error };
  }
  const teams: TeamChoice[] = (profile.data?.teams ?? []).map((t) => ({ name: t.name, displayName: t.displayName || t.name }));
  return { teams, isPending: profile.isPending, error: profile.error };
}

const LAST_TEAM = "baton.team";

/** useCurrentTeam is the team of the page (its URL), else the one last visited. */
export function useCurrentTeam(): string | undefined {
  const { team } = useParams();
  if (team) return team;
  try {
    return window.localStorage.getItem(LAST_TEAM) ?? undefined;
  } catch {
    return undefined;
  }
}

export function rememberTeam(team: string) {
  try {
    window.localStorage.setItem(LAST_TEAM, team);
  } catch {
    // Not kept: the next visit starts at the first team.
  }
}
