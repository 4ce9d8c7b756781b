import { Badge } from "@mantine/core";

// Colours of the run and task-run statuses (WorkflowRunStatus): one reading in every page.
const colors: Record<string, string> = {
  notstarted: "gray",
  ready: "gray",
  running: "blue",
  waiting: "yellow",
  succeeded: "green",
  failed: "red",
  invalid: "red",
  skipped: "gray",
  cancelled: "orange",
  timedout: "red",
};

/** StatusBadge shows a run's or task run's status in words (colour only repeats them). */
export function StatusBadge({ status }: { status: string | undefined }) {
  const s = status ?? "unknown";
  return (
    <Badge color={colors[s] ?? "gray"} variant="dot">
      {s}
    </Badge>
  );
}
