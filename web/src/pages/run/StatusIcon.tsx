import {
  IconAlertTriangle,
  IconBan,
  IconCircleCheck,
  IconCircleDashed,
  IconCircleX,
  IconClockX,
  IconHourglass,
  IconLoader2,
  IconPlayerSkipForward,
  type Icon,
} from "@tabler/icons-react";

/** The colour (a Mantine colour name) and icon of each status: the icon and the word say it, the colour repeats it. */
export const statusLook: Record<string, { color: string; icon: Icon }> = {
  notstarted: { color: "gray", icon: IconCircleDashed },
  ready: { color: "gray", icon: IconCircleDashed },
  running: { color: "blue", icon: IconLoader2 },
  waiting: { color: "yellow", icon: IconHourglass },
  succeeded: { color: "green", icon: IconCircleCheck },
  failed: { color: "red", icon: IconCircleX },
  invalid: { color: "red", icon: IconAlertTriangle },
  skipped: { color: "gray", icon: IconPlayerSkipForward },
  cancelled: { color: "orange", icon: IconBan },
  timedout: { color: "red", icon: IconClockX },
};

const unknownLook = { color: "gray", icon: IconCircleDashed };

export function lookOf(status: string | undefined): { color: string; icon: Icon } {
  return statusLook[status ?? "notstarted"] ?? unknownLook;
}

/** StatusIcon is a status's icon in its colour, hidden from screen readers (the word beside it is read). */
export function StatusIcon({ status, size = 18 }: { status: string | undefined; size?: number }) {
  const { color, icon: I } = lookOf(status);
  return <I aria-hidden size={size} color={`var(--mantine-color-${color}-filled)`} style={{ flex: "none" }} />;
}
