import { useDebouncedValue } from "@mantine/hooks";
import { useQuery } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { asApiError } from "../../api/errors";

export type NameCheck =
  | { state: "empty" }
  | { state: "checking" }
  | { state: "free"; slug: string }
  | { state: "refused"; reason: string; message: string };

/**
 * useTeamNameCheck asks POST /team/validate-name about a name as it is typed (once typing
 * pauses): free with the slug it becomes, or refused in the API's words (taken, reserved, no
 * usable characters).
 */
export function useTeamNameCheck(name: string): NameCheck {
  const [debounced] = useDebouncedValue(name.trim(), 300);
  const q = useQuery({
    queryKey: ["team-name", debounced],
    queryFn: () => call(api.POST("/api/v2/team/validate-name", { body: { name: debounced } })),
    enabled: debounced !== "",
    retry: false,
    staleTime: 5_000,
  });
  if (name.trim() === "") return { state: "empty" };
  if (debounced !== name.trim() || q.isPending) return { state: "checking" };
  if (q.error) {
    const e = asApiError(q.error);
    return { state: "refused", reason: e.reason, message: e.message };
  }
  return { state: "free", slug: q.data?.name ?? debounced };
}
