import { queryOptions, useQuery } from "@tanstack/react-query";
import { api, call, type Schemas } from "./client";
import { useToken } from "../session/session";

export type Profile = Schemas["UserProfile"];

export const profileKey = (token: string | null) => ["profile", token] as const;

/** fetchProfile asks who a token is: GET /api/v2/profile with it. */
export function fetchProfile(token: string): Promise<Profile> {
  return call(api.GET("/api/v2/profile", { headers: { Authorization: `Bearer ${token}` } }));
}

/** profileQuery reads a token's profile, once a minute at most. */
export const profileQuery = (token: string | null) =>
  queryOptions({
    queryKey: profileKey(token),
    queryFn: () => fetchProfile(token ?? ""),
    enabled: token !== null,
    staleTime: 60_000,
  });

/** useProfile is the signed-in principal's profile (name, teams, permissions). */
export function useProfile() {
  return useQuery(profileQuery(useToken()));
}

/** isAdmin says whether a profile may use the administration pages: a global grant on system. */
export function isAdmin(p: Profile | undefined): boolean {
  if (!p) return false;
  return (p.permissions ?? []).some((g) => !g.includes(":") && (g.startsWith("**/") || g.startsWith("system/")));
}
