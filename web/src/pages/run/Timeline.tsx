// The run's timeline: a Gantt of its task runs, each bar from the task's start for its
// duration (growing while it runs), on one scale from the run's start to its end or now.
import { Box, Group, Stack, Text, UnstyledButton } from "@mantine/core";
import { elapsed, formatDuration, type TaskRun } from "./status";
import { lookOf, StatusIcon } from "./StatusIcon";

export interface TimelineProps {
  tasks: TaskRun[];
  runStart: string | undefined;
  selected: string | undefined;
  onSelect: (name: string) => void;
  now: number;
}

interface Bar {
  task: TaskRun;
  start: number;
  length: number;
}

export default function Timeline({ tasks, runStart, selected, onSelect, now }: TimelineProps) {
  const bars: Bar[] = [];
  const waiting: TaskRun[] = [];
  for (const t of tasks) {
    const start = t.startTime ? Date.parse(t.startTime) : NaN;
    if (Number.isNaN(start)) {
      waiting.push(t);
      continue;
    }
    bars.push({ task: t, start, length: elapsed(t, now) ?? 0 });
  }
  bars.sort((a, b) => a.start - b.start || (a.task.name ?? "").localeCompare(b.task.name ?? ""));
  if (bars.length === 0) {
    return <Text c="dimmed">No task has started yet.</Text>;
  }
  const t0 = Math.min(runStart ? Date.parse(runStart) : Infinity, ...bars.map((b) => b.start));
  const t1 = Math.max(...bars.map((b) => b.start + b.length), t0 + 1000);
  const span = t1 - t0;
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const row = (t: TaskRun, bar?: Bar) => {
    const { color } = lookOf(t.status);
    const took = bar ? formatDuration(bar.length) : "";
    const at = bar ? `starts at +${formatDuration(bar.start - t0)}` : "not started";
    return (
      <Group key={t.id ?? t.name} gap="sm" wrap="nowrap" align="center">
        <UnstyledButton
          onClick={() => onSelect(t.name ?? "")}
          aria-pressed={t.name === selected}
          aria-label={`Task ${t.name}: ${t.status}, ${at}${took ? `, took ${took}` : ""}`}
          w={200}
          px={6}
          py={2}
          style={{
            flex: "none",
            borderRadius: 4,
            background: t.name === selected ? "var(--mantine-primary-color-light)" : undefined,
          }}
        >
          <Group gap={6} wrap="nowrap">
            <StatusIcon status={t.status} size={16} />
            <Text size="sm" truncate="end">
              {t.name}
            </Text>
          </Group>
        </UnstyledButton>
        <Box pos="relative" h={20} style={{ flex: 1 }} aria-hidden>
          {bar && (
            <Box
              pos="absolute"
              top={2}
              h={16}
              data-task={t.name}
              style={{
                left: `${((bar.start - t0) / span) * 100}%`,
                width: `max(3px, ${(bar.length / span) * 100}%)`,
                background: `var(--mantine-color-${color}-filled)`,
                borderRadius: 3,
              }}
            />
          )}
        </Box>
        <Text size="xs" w={90} ta="right" style={{ flex: "none" }}>
          {took || t.status}
        </Text>
      </Group>
    );
  };
  return (
    <Stack gap={4} aria-label="Timeline of the run's tasks" role="group">
      <Group gap="sm" wrap="nowrap" aria-hidden>
        <Box w={200} style={{ flex: "none" }} />
        <Box pos="relative" h={18} style={{ flex: 1 }}>
          {ticks.map((f) => (
            <Text
              key={f}
              size="xs"
              c="dimmed"
              pos="absolute"
              style={{ left: `${f * 100}%`, transform: f === 0 ? undefined : f === 1 ? "translateX(-100%)" : "translateX(-50%)" }}
            >
              +{formatDuration(f * span)}
            </Text>
          ))}
        </Box>
        <Box w={90} style={{ flex: "none" }} />
      </Group>
      {bars.map((b) => row(b.task, b))}
      {waiting.map((t) => row(t))}
    </Stack>
  );
}
