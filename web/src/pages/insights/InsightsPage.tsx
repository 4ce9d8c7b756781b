import {
  Alert,
  Card,
  Center,
  Group,
  Loader,
  MultiSelect,
  SegmentedControl,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
  UnstyledButton,
  VisuallyHidden,
} from "@mantine/core";
import { IconArrowDown, IconArrowUp, IconArrowsSort } from "@tabler/icons-react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useMemo } from "react";
import { useParams, useSearchParams } from "react-router";
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from "recharts";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import {
  byDay,
  formatDuration,
  percentiles,
  perWorkflow,
  sortRows,
  statusesIn,
  type DayBucket,
  type RunStatus,
  type SortKey,
  type WorkflowRow,
} from "./insights";

const DAY = 86_400_000;
const presets = ["7d", "30d", "90d", "custom"] as const;
type Preset = (typeof presets)[number];

// Each status its own shade, so the stacked bars read apart; the legend and table name them.
const barColor: Record<RunStatus, string> = {
  succeeded: "var(--mantine-color-green-6)",
  failed: "var(--mantine-color-red-7)",
  timedout: "var(--mantine-color-pink-5)",
  invalid: "var(--mantine-color-grape-6)",
  cancelled: "var(--mantine-color-orange-5)",
  skipped: "var(--mantine-color-gray-5)",
  running: "var(--mantine-color-blue-6)",
  waiting: "var(--mantine-color-yellow-5)",
  ready: "var(--mantine-color-cyan-5)",
  notstarted: "var(--mantine-color-gray-3)",
};

/**
 * patched is the page's query with changes (null or "" removes a key), from the address as it
 * is now, so that quick successive changes by different controls all stay.
 */
function patched(changes: Record<string, string | null>): URLSearchParams {
  const next = new URLSearchParams(window.location.search);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === "") next.delete(k);
    else next.set(k, v);
  }
  return next;
}

/** window reads the date range of the URL: a preset (`range`) or `from`..`to` (UTC days, both included). */
function useWindow() {
  const [params, setParams] = useSearchParams();
  const preset = (presets as readonly string[]).includes(params.get("range") ?? "") ? (params.get("range") as Preset) : "30d";
  const now = Date.now();
  let from: number;
  let to: number;
  if (preset === "custom") {
    const f = Date.parse(`${params.get("from") ?? ""}T00:00:00Z`);
    const t = Date.parse(`${params.get("to") ?? ""}T23:59:59.999Z`);
    to = Number.isNaN(t) ? now : t;
    from = Number.isNaN(f) ? to - 30 * DAY : f;
  } else {
    to = now;
    from = now - Number(preset.replace("d", "")) * DAY;
  }
  const workflows = (params.get("workflows") ?? "").split(",").filter(Boolean);
  const update = (changes: Record<string, string | null>) => setParams(patched(changes), { replace: true });
  return { params, preset, from, to, workflows, update };
}

/** InsightsPage aggregates the team's runs of a date range: by status over time, durations, per workflow. */
export default function InsightsPage() {
  const { team = "" } = useParams();
  const w = useWindow();
  // A preset's window moves with the clock; the query key keeps it by the minute.
  const minute = (t: number) => Math.floor(t / 60_000) * 60_000;
  const fromDate = w.preset === "custom" ? w.from : minute(w.from);
  const toDate = w.preset === "custom" ? w.to : minute(w.to) + 59_999;
  const insights = useQuery({
    queryKey: ["insights", team, fromDate, toDate, w.workflows],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/insights", {
          params: {
            path: { team },
            query: { fromDate, toDate, workflows: w.workflows.length > 0 ? w.workflows : undefined },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const workflows = useQuery({
    queryKey: ["workflows", team, "names"],
    queryFn: () =>
      call(api.GET("/api/v2/team/{team}/workflow/query", { params: { path: { team }, query: { limit: 1000 } } })),
    staleTime: 60_000,
  });
  const workflowNames = (workflows.data?.content ?? []).map((x) => x.name ?? "").filter(Boolean);
  for (const name of w.workflows) if (!workflowNames.includes(name)) workflowNames.push(name);

  const runs = insights.data?.runs ?? [];
  const days = useMemo(() => byDay(runs, fromDate, toDate), [runs, fromDate, toDate]);
  const p = useMemo(() => percentiles(runs), [runs]);
  const rows = useMemo(() => perWorkflow(runs), [runs]);

  return (
    <Stack>
      <Title order={1}>Insights</Title>
      <Group align="end" wrap="wrap">
        <div>
          <Text size="sm" fw={500} id="insights-range" mb={4}>
            Date range
          </Text>
          <SegmentedControl
            aria-labelledby="insights-range"
            value={w.preset}
            onChange={(v) =>
              w.update(
                v === "custom"
                  ? { range: v, from: new Date(w.from).toISOString().slice(0, 10), to: new Date(w.to).toISOString().slice(0, 10) }
                  : { range: v === "30d" ? null : v, from: null, to: null },
              )
            }
            data={[
              { value: "7d", label: "7 days" },
              { value: "30d", label: "30 days" },
              { value: "90d", label: "90 days" },
              { value: "custom", label: "Custom" },
            ]}
          />
        </div>
        {w.preset === "custom" && (
          <>
            <TextInput
              type="date"
              label="From (UTC)"
              value={w.params.get("from") ?? ""}
              onChange={(e) => w.update({ from: e.currentTarget.value })}
            />
            <TextInput
              type="date"
              label="To (UTC)"
              value={w.params.get("to") ?? ""}
              onChange={(e) => w.update({ to: e.currentTarget.value })}
            />
          </>
        )}
        <MultiSelect
          label="Workflows"
          placeholder={w.workflows.length === 0 ? "All workflows" : undefined}
          data={workflowNames}
          value={w.workflows}
          onChange={(v) => w.update({ workflows: v.join(",") })}
          searchable
          clearable
          miw={240}
          comboboxProps={{ withinPortal: true }}
        />
        {insights.isFetching && <Loader size="sm" aria-label="Loading" />}
      </Group>

      {insights.error ? (
        <ErrorAlert error={insights.error} title="Insights could not be read" />
      ) : !insights.data ? (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      ) : (
        <>
          <SimpleGrid cols={{ base: 2, md: 6 }}>
            <Stat label="Runs" value={String(insights.data.totalRuns)} />
            <Stat label="Running now" value={String(insights.data.concurrentRuns)} />
            <Stat label="Median duration" value={formatDuration(insights.data.medianDuration)} />
            <Stat label="p50" value={formatDuration(p.p50)} />
            <Stat label="p90" value={formatDuration(p.p90)} />
            <Stat label="p99" value={formatDuration(p.p99)} />
          </SimpleGrid>
          {insights.data.totalRuns > runs.length && (
            <Alert color="blue" variant="light">
              The chart, the percentiles and the table are of the newest {runs.length.toLocaleString()} of the window's{" "}
              {insights.data.totalRuns.toLocaleString()} runs; the counts and the median above are of all of them.
            </Alert>
          )}
          {runs.length === 0 ? (
            <Text c="dimmed">No runs in this window{w.workflows.length > 0 ? " of these workflows" : ""}.</Text>
          ) : (
            <>
              <RunsByDay days={days} />
              <Text size="xs" c="dimmed">
                Percentiles are of the {p.count} finished runs (nearest rank); a run in flight has no duration yet.
              </Text>
              <WorkflowTable rows={rows} />
            </>
          )}
        </>
      )}
    </Stack>
  );
}

function Stat({ label, value }: { label: string; value: string }) {
  return (
    <Card withBorder padding="sm">
      <Text size="xs" c="dimmed" tt="uppercase" fw={600}>
        {label}
      </Text>
      <Text size="xl" fw={700} aria-label={`${label}: ${value}`}>
        {value}
      </Text>
    </Card>
  );
}

/** RunsByDay stacks each day's runs by status; its data is also a table, shown on request. */
function RunsByDay({ days }: { days: DayBucket[] }) {
  const [params, setParams] = useSearchParams();
  const view = params.get("view") === "table" ? "table" : "chart";
  const statuses = statusesIn(days);
  const total = days.reduce((n, d) => n + d.total, 0);
  const busiest = days.reduce<DayBucket | undefined>((a, d) => (!a || d.total > a.total ? d : a), undefined);
  const summary = `Runs by day and status: ${total} runs over ${days.length} days${busiest ? `, most on ${busiest.day} (${busiest.total})` : ""}; ${statuses
    .map((s) => `${s} ${days.reduce((n, d) => n + (d[s] ?? 0), 0)}`)
    .join(", ")}.`;
  return (
    <Card withBorder>
      <Group justify="space-between" mb="sm">
        <Title order={2} size="h4">
          Runs by status over time
        </Title>
        <SegmentedControl
          size="xs"
          aria-label="Show runs by status as"
          value={view}
          onChange={(v) => setParams(patched({ view: v === "table" ? "table" : null }), { replace: true })}
          data={[
            { value: "chart", label: "Chart" },
            { value: "table", label: "Table" },
          ]}
        />
      </Group>
      {view === "chart" ? (
        <figure style={{ margin: 0 }} aria-label={summary}>
          <div style={{ width: "100%", height: 280 }} aria-hidden>
            <ResponsiveContainer>
              <BarChart data={days} margin={{ top: 4, right: 8, bottom: 4, left: 0 }} accessibilityLayer={false}>
                <CartesianGrid strokeDasharray="3 3" stroke="var(--mantine-color-default-border)" />
                <XAxis dataKey="day" tick={{ fontSize: 11, fill: "var(--mantine-color-dimmed)" }} minTickGap={16} />
                <YAxis allowDecimals={false} tick={{ fontSize: 11, fill: "var(--mantine-color-dimmed)" }} width={36} />
                <Tooltip
                  contentStyle={{ background: "var(--mantine-color-body)", border: "1px solid var(--mantine-color-default-border)" }}
                  labelStyle={{ color: "var(--mantine-color-text)" }}
                />
                <Legend wrapperStyle={{ fontSize: 12 }} />
                {statuses.map((s) => (
                  <Bar key={s} dataKey={s} stackId="runs" fill={barColor[s]} name={s} isAnimationActive={false} />
                ))}
              </BarChart>
            </ResponsiveContainer>
          </div>
          <VisuallyHidden>
            <figcaption>{summary}</figcaption>
          </VisuallyHidden>
        </figure>
      ) : (
        <Table.ScrollContainer minWidth={500}>
          <Table striped aria-label="Runs by day and status">
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Day (UTC)</Table.Th>
                {statuses.map((s) => (
                  <Table.Th scope="col" key={s}>
                    {s}
                  </Table.Th>
                ))}
                <Table.Th scope="col">Total</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {days.map((d) => (
                <Table.Tr key={d.day}>
                  <Table.Th scope="row">{d.day}</Table.Th>
                  {statuses.map((s) => (
                    <Table.Td key={s}>{d[s] ?? 0}</Table.Td>
                  ))}
                  <Table.Td>{d.total}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Card>
  );
}

const columns: { key: SortKey; label: string; numeric?: boolean }[] = [
  { key: "workflow", label: "Workflow" },
  { key: "runs", label: "Runs", numeric: true },
  { key: "succeeded", label: "Succeeded", numeric: true },
  { key: "failed", label: "Failed", numeric: true },
  { key: "successRate", label: "Success rate", numeric: true },
  { key: "p50", label: "p50", numeric: true },
  { key: "p90", label: "p90", numeric: true },
  { key: "p99", label: "p99", numeric: true },
  { key: "lastRun", label: "Last run" },
];

/** WorkflowTable is one row per workflow, sorted by the column the URL names (`sort`, `desc`). */
function WorkflowTable({ rows }: { rows: WorkflowRow[] }) {
  const [params, setParams] = useSearchParams();
  const key = (columns.find((c) => c.key === params.get("sort"))?.key ?? "runs") as SortKey;
  const desc = params.get("order") !== "asc";
  const sorted = sortRows(rows, key, desc);
  const sortBy = (k: SortKey) => {
    const nextDesc = k === key ? !desc : k !== "workflow";
    setParams(patched({ sort: k, order: nextDesc ? "desc" : "asc" }), { replace: true });
  };
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="sm">
        Per workflow
      </Title>
      <Table.ScrollContainer minWidth={800}>
        <Table striped highlightOnHover aria-label="Runs per workflow">
          <Table.Thead>
            <Table.Tr>
              {columns.map((c) => {
                const active = c.key === key;
                const Icon = !active ? IconArrowsSort : desc ? IconArrowDown : IconArrowUp;
                return (
                  <Table.Th
                    key={c.key}
                    scope="col"
                    aria-sort={active ? (desc ? "descending" : "ascending") : "none"}
                    style={{ textAlign: c.numeric ? "right" : undefined }}
                  >
                    <UnstyledButton onClick={() => sortBy(c.key)} fw={600} fz="sm">
                      <Group gap={4} wrap="nowrap" justify={c.numeric ? "flex-end" : undefined}>
                        {c.label}
                        <Icon size={14} aria-hidden />
                      </Group>
                    </UnstyledButton>
                  </Table.Th>
                );
              })}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {sorted.map((r) => (
              <Table.Tr key={r.workflow}>
                <Table.Th scope="row">
                  {r.workflow}
                </Table.Th>
                <Table.Td ta="right">{r.runs}</Table.Td>
                <Table.Td ta="right">{r.succeeded}</Table.Td>
                <Table.Td ta="right">{r.failed}</Table.Td>
                <Table.Td ta="right">{r.successRate === undefined ? "—" : `${Math.round(r.successRate * 100)}%`}</Table.Td>
                <Table.Td ta="right">{formatDuration(r.p50)}</Table.Td>
                <Table.Td ta="right">{formatDuration(r.p90)}</Table.Td>
                <Table.Td ta="right">{formatDuration(r.p99)}</Table.Td>
                <Table.Td>{new Date(r.lastRun).toLocaleString()}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Card>
  );
}
