import type { Profile } from "../../api/profile";

/**
 * may says whether the signed-in principal holds `<resource>/<action>` in a team's workflow,
 * by its profile's grants: a global grant as is (`**\/read`), a team's as `<team>:<grant>`,
 * a workflow token's as `<team>/<workflow>:<grant>`; `**` matches anything on either side.
 * It only decides what the page offers: the API checks every call again.
 */
export function may(profile: Profile | undefined, team: string, workflow: string, resource: string, action: string): boolean {
  for (const g of profile?.permissions ?? []) {
    const colon = g.indexOf(":");
    const scope = colon < 0 ? "" : g.slice(0, colon);
    const grant = colon < 0 ? g : g.slice(colon + 1);
    if (scope !== "") {
      const slash = scope.indexOf("/");
      const t = slash < 0 ? scope : scope.slice(0, slash);
      const w = slash < 0 ? "" : scope.slice(slash + 1);
      if (t !== team || (w !== "" && w !== workflow)) continue;
    }
    const [r, a] = grant.split("/");
    if ((r === "**" || r === resource) && (a === "**" || a === action)) return true;
  }
  return false;
}
