// The run page (/teams/:team/runs/:runId): the run's DAG coloured by task status, its
// timeline, its params and results, the selected task's details and log, and the run's
// controls; kept current by the run's watch. The view (?view=) and the selected task
// (?task=) are in the URL, so a link opens the page as it was.
import { Alert, Anchor, Badge, Box, Center, Code, Grid, Group, Loader, Stack, Tabs, Text, Title } from "@mantine/core";
import { IconChartGantt, IconListDetails, IconSitemap } from "@tabler/icons-react";
import { useCallback, useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorAlert } from "../../api/ErrorAlert";
import { StatusBadge } from "../../components/StatusBadge";
import { buildGraph } from "./graph";
import { useLiveRun, useNow, useParentTask, useWorkflowVersion } from "./queries";
import RunGraph from "./RunGraph";
import type { Param } from "./RunAgain";
import { RunControls } from "./RunControls";
import { elapsed, ended, formatDuration, type Run } from "./status";
import { TaskPanel } from "./TaskPanel";
import Timeline from "./Timeline";
import type { WatchState } from "./watch";

const views = ["graph", "timeline", "details"] as const;
type View = (typeof views)[number];

const runPath = (team: string, id: string, task?: string) =>
  `/teams/${encodeURIComponent(team)}/runs/${encodeURIComponent(id)}${task ? `?task=${encodeURIComponent(task)}` : ""}`;

function LiveBadge({ state }: { state: WatchState }) {
  const look: Record<WatchState, { color: string; text: string }> = {
    connecting: { color: "gray", text: "Connecting" },
    live: { color: "green", text: "Live" },
    reconnecting: { color: "yellow", text: "Reconnecting" },
    polling: { color: "blue", text: "Refreshed every second" },
    ended: { color: "gray", text: "Ended" },
    refused: { color: "red", text: "Not followed" },
  };
  const l = look[state];
  return (
    <Badge variant="dot" color={l.color} aria-label={`Updates: ${l.text}`}>
      {l.text}
    </Badge>
  );
}

function Lineage({ team, run }: { team: string; run: Run }) {
  const parentTask = useParentTask(team, run);
  return (
    <>
      {run.parentRun && (
        <Text size="sm">
          Child run of{" "}
          {parentTask.data ? (
            <>
              task{" "}
              <Anchor component={Link} to={runPath(team, run.parentRun, parentTask.data)}>
                {parentTask.data}
              </Anchor>{" "}
              of{" "}
            </>
          ) : null}
          run{" "}
          <Anchor component={Link} to={runPath(team, run.parentRun)}>
            {run.parentRun}
          </Anchor>
        </Text>
      )}
      {run.retryOf && (
        <Text size="sm">
          Retry of run{" "}
          <Anchor component={Link} to={runPath(team, run.retryOf)}>
            {run.retryOf}
          </Anchor>
        </Text>
      )}
    </>
  );
}

function Values({ title, values }: { title: string; values: { name: string; value?: unknown }[] | undefined }) {
  return (
    <Stack gap={4}>
      <Title order={2} size="h5">
        {title}
      </Title>
      {!values || values.length === 0 ? (
        <Text size="sm" c="dimmed">
          None.
        </Text>
      ) : (
        values.map((v) => (
          <Group key={v.name} gap="xs" align="flex-start" wrap="nowrap">
            <Text size="sm" fw={500} w={200} style={{ flex: "none", wordBreak: "break-all" }}>
              {v.name}
            </Text>
            <Code block style={{ flex: 1, whiteSpace: "pre-wrap", wordBreak: "break-all" }}>
              {typeof v.value === "string" ? v.value : JSON.stringify(v.value, null, 2)}
            </Code>
          </Group>
        ))
      )}
    </Stack>
  );
}

export default function RunPage() {
  const { team = "", runId = "" } = useParams();
  // A page per run: moving to another run (a retry, a child) starts from nothing.
  return <RunView key={`${team}/${runId}`} team={team} runId={runId} />;
}

function RunView({ team, runId }: { team: string; runId: string }) {
  const [search, setSearch] = useSearchParams();
  const { run, watch } = useLiveRun(team, runId);
  const workflow = useWorkflowVersion(team, run.data);
  const now = useNow(run.data !== undefined && !ended(run.data));
  const selected = search.get("task") ?? undefined;
  const view: View = (views as readonly string[]).includes(search.get("view") ?? "") ? (search.get("view") as View) : "graph";

  const setParam = useCallback(
    (key: string, value: string | undefined) =>
      setSearch(
        (s) => {
          const next = new URLSearchParams(s);
          if (value) next.set(key, value);
          else next.delete(key);
          return next;
        },
        { replace: key === "view" },
      ),
    [setSearch],
  );
  const select = useCallback((name: string) => setParam("task", name), [setParam]);

  const tasks = run.data?.tasks;
  const graph = useMemo(() => buildGraph(workflow.data?.tasks, tasks), [workflow.data?.tasks, tasks]);

  if (run.isPending) {
    return (
      <Center p="xl">
        <Loader aria-label="Loading the run" />
      </Center>
    );
  }
  if (run.error) {
    return (
      <Stack>
        <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/runs`} size="sm">
          All runs
        </Anchor>
        <ErrorAlert error={run.error} title="The run could not be read" />
      </Stack>
    );
  }
  const r = run.data;
  const name = r.workflowDisplayName || r.workflowName || r.workflowRef || "";
  const selectedTask = selected ? tasks?.find((t) => t.name === selected) : undefined;
  const selectedKnown = selected !== undefined && graph.nodes.some((n) => n.name === selected);
  const took = formatDuration(elapsed(r, now));

  return (
    <Stack gap="sm">
      <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/runs`} size="sm">
        All runs
      </Anchor>
      <Group justify="space-between" align="flex-start">
        <Stack gap={4}>
          <Group gap="sm">
            <Title order={1} size="h2">
              {name}
            </Title>
            <StatusBadge status={r.status} />
            <Text size="sm" c="dimmed">
              {r.phase}
            </Text>
            <LiveBadge state={watch.state} />
          </Group>
          <Group gap="md">
            <Text size="sm">
              Run <Code>{r.id}</Code>
            </Text>
            <Text size="sm">Version {r.workflowVersion}</Text>
            <Text size="sm">Trigger {r.trigger}</Text>
            {(r.initiatedBy?.name || r.initiatedByUserName) && <Text size="sm">By {r.initiatedBy?.name || r.initiatedByUserName}</Text>}
            {r.startTime && <Text size="sm">Started {new Date(r.startTime).toLocaleString()}</Text>}
            {took && <Text size="sm">{ended(r) ? "Took" : "Running for"} {took}</Text>}
          </Group>
          <Lineage team={team} run={r} />
        </Stack>
        <RunControls team={team} run={r} params={workflow.data ? ((workflow.data.params ?? []) as Param[]) : undefined} />
      </Group>
      {r.statusMessage && (
        <Alert color={r.status === "succeeded" ? "green" : r.status === "failed" || r.status === "timedout" || r.status === "invalid" ? "red" : "gray"} variant="light" title="Status message">
          {r.statusMessage}
        </Alert>
      )}
      {watch.state === "reconnecting" && watch.error && (
        <Text size="xs" c="dimmed">
          Live updates were cut ({watch.error.reason}); reconnecting.
        </Text>
      )}
      {workflow.error && <ErrorAlert error={workflow.error} title="The workflow version could not be read, so dependencies are not shown" />}
      <Grid gap="md">
        <Grid.Col span={selected ? { base: 12, lg: 7 } : 12}>
          <Tabs value={view} onChange={(v) => setParam("view", v === "graph" ? undefined : (v ?? undefined))} keepMounted={false}>
            <Tabs.List mb="sm">
              <Tabs.Tab value="graph" leftSection={<IconSitemap size={16} aria-hidden />}>
                Graph
              </Tabs.Tab>
              <Tabs.Tab value="timeline" leftSection={<IconChartGantt size={16} aria-hidden />}>
                Timeline
              </Tabs.Tab>
              <Tabs.Tab value="details" leftSection={<IconListDetails size={16} aria-hidden />}>
                Params and results
              </Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="graph">
              {graph.nodes.length === 0 ? (
                workflow.isPending ? (
                  <Center p="xl">
                    <Loader aria-label="Loading the workflow" />
                  </Center>
                ) : (
                  <Text c="dimmed">This run has no tasks.</Text>
                )
              ) : (
                <RunGraph nodes={graph.nodes} edges={graph.edges} selected={selected} onSelect={select} now={now} />
              )}
            </Tabs.Panel>
            <Tabs.Panel value="timeline">
              <Timeline tasks={tasks ?? []} runStart={r.startTime} selected={selected} onSelect={select} now={now} />
            </Tabs.Panel>
            <Tabs.Panel value="details">
              <Stack>
                <Values title="Params" values={r.params} />
                <Values title="Results" values={r.results} />
              </Stack>
            </Tabs.Panel>
          </Tabs>
        </Grid.Col>
        {selected && (
          <Grid.Col span={{ base: 12, lg: 5 }}>
            <Box>
              {selectedKnown || selectedTask ? (
                <TaskPanel team={team} run={r} name={selected} task={selectedTask} now={now} onClose={() => setParam("task", undefined)} />
              ) : (
                <Alert color="yellow" variant="light" title="No such task">
                  This run has no task named {selected}.
                </Alert>
              )}
            </Box>
          </Grid.Col>
        )}
      </Grid>
    </Stack>
  );
}
