import { Badge, type BadgeProps } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import type { ReactNode } from "react";

/**
 * TintBadge is a light badge whose words are in the text's colour: a light variant's own
 * text (yellow on pale yellow, say) falls short of WCAG's contrast; the tint still tells the
 * colour, the words say the same.
 */
export function TintBadge({ children, ...props }: BadgeProps & { children: ReactNode; title?: string }) {
  return (
    <Badge variant="light" {...props} styles={{ label: { color: "var(--mantine-color-text)" } }}>
      {children}
    </Badge>
  );
}

const statusColors: Record<string, string> = { submitted: "yellow", approved: "green", rejected: "red", cancelled: "gray" };
const statusWords: Record<string, string> = { submitted: "pending", approved: "approved", rejected: "rejected", cancelled: "cancelled" };

/** ActionStatusBadge shows an action's status in words; `submitted` reads "pending". */
export function ActionStatusBadge({ status }: { status: string | undefined }) {
  const s = status ?? "unknown";
  return (
    <TintBadge color={statusColors[s] ?? "gray"}>{statusWords[s] ?? s}</TintBadge>
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

/** notify tells that something was done, in a notification whose close button has a name. */
export function notify(color: string, message: string) {
  notifications.show({ color, message, closeButtonProps: { "aria-label": "Dismiss" } });
}
