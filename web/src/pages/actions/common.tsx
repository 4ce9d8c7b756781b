import { Badge } from "@mantine/core";

const statusColors: Record<string, string> = { submitted: "yellow", approved: "green", rejected: "red", cancelled: "gray" };
const statusWords: Record<string, string> = { submitted: "pending", approved: "approved", rejected: "rejected", cancelled: "cancelled" };

/** ActionStatusBadge shows an action's status in words; `submitted` reads "pending". */
export function ActionStatusBadge({ status }: { status: string | undefined }) {
  const s = status ?? "unknown";
  return (
    <Badge color={statusColors[s] ?? "gray"} variant="light" autoContrast>
      {statusWords[s] ?? s}
    </Badge>
  );
}

export function actionTypeLabel(t: string | undefined): string {
  return t === "manual" ? "Manual" : t === "approval" ? "Approval" : (t ?? "");
}

/** formatDate writes an API date in the browser's zone, or a dash. */
export function formatDate(d: string | undefined): string {
  if (!d) return "—";
  const t = new Date(d);
  return Number.isNaN(t.getTime()) ? d : t.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
