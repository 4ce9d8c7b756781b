// The selected task: its status and message, attempts, timing, params and results (masked
// as the API masks them), the action it waits on, the child run it started, and its log.
import { ActionIcon, Anchor, Badge, Code, Group, Paper, Stack, Table, Text, Title } from "@mantine/core";
import { IconX } from "@tabler/icons-react";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { StatusBadge } from "../../components/StatusBadge";
import { elapsed, ended, formatDuration, gate, type Run, type TaskRun } from "./status";
import { TaskLog } from "./TaskLog";

type NameValue = { name: string; value?: unknown };

function show(v: unknown): string {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

function Values({ title, values, empty }: { title: string; values: NameValue[] | undefined; empty: string }) {
  return (
    <Stack gap={4}>
      <Title order={3} size="h5">
        {title}
      </Title>
      {!values || values.length === 0 ? (
        <Text size="sm" c="dimmed">
          {empty}
        </Text>
      ) : (
        <Table withRowBorders={false} verticalSpacing={2} aria-label={title}>
          <Table.Tbody>
            {values.map((p) => (
              <Table.Tr key={p.name}>
                <Table.Th w="35%" style={{ verticalAlign: "top", fontWeight: 500 }}>
                  <Text size="sm" style={{ wordBreak: "break-all" }}>
                    {p.name}
                  </Text>
                </Table.Th>
                <Table.Td>
                  <Code block style={{ whiteSpace: "pre-wrap", wordBreak: "break-all" }}>
                    {show(p.value)}
                  </Code>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

/** WaitingAction links an approval or manual task that waits to its item in the actions inbox. */
function WaitingAction({ team, run, task }: { team: string; run: Run; task: TaskRun }) {
  const type = task.type === "approval" ? "approval" : "manual";
  const actions = useQuery({
    queryKey: ["actions", team, "of-task", task.id],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/action/query", {
          params: { path: { team }, query: { workflows: [run.workflowRef ?? ""], statuses: ["submitted"], types: [type], limit: 1000 } },
        }),
      ),
  });
  if (actions.error) return <ErrorAlert error={actions.error} title="The task's action could not be read" />;
  const action = actions.data?.content?.find((a) => a.taskRunRef === task.id);
  if (!action?.id) return null;
  return (
    <Text size="sm">
      <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/actions/${encodeURIComponent(action.id)}`}>
        {type === "approval" ? "Approve or reject it in the actions inbox" : "Complete it in the actions inbox"}
      </Anchor>
    </Text>
  );
}

export interface TaskPanelProps {
  team: string;
  run: Run;
  name: string;
  /** task is undefined for a task of the workflow that has no task run yet. */
  task: TaskRun | undefined;
  now: number;
  onClose: () => void;
}

export function TaskPanel({ team, run, name, task, now, onClose }: TaskPanelProps) {
  const child =
    task?.workflowRunChildRef ?? (task?.results?.find((r) => r.name === "workflowRunRef")?.value as string | undefined);
  const waits = task ? gate(task) : undefined;
  const started = !!task?.startTime || (task?.attempt ?? 0) > 0;
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-label={`Task ${name}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Stack gap={2} style={{ minWidth: 0 }}>
            <Title order={2} size="h4" style={{ wordBreak: "break-all" }}>
              {name}
            </Title>
            <Group gap="xs">
              <StatusBadge status={task?.status ?? "notstarted"} />
              {task?.type && <Badge variant="outline" color="gray">{task.type}</Badge>}
              {waits && <Text size="sm">{waits}</Text>}
            </Group>
          </Stack>
          <ActionIcon variant="subtle" color="gray" onClick={onClose} aria-label="Close the task's details">
            <IconX size={18} aria-hidden />
          </ActionIcon>
        </Group>
        {!task ? (
          <Text c="dimmed">This task has not been reached in this run.</Text>
        ) : (
          <>
            {task.statusMessage && (
              <Text size="sm" style={{ whiteSpace: "pre-wrap" }}>
                {task.statusMessage}
              </Text>
            )}
            <Group gap="lg">
              <Text size="sm">
                Attempt <b>{task.attempt ?? 0}</b>
              </Text>
              {task.startTime && (
                <Text size="sm">
                  Started <b>{new Date(task.startTime).toLocaleString()}</b>
                </Text>
              )}
              {task.startTime && (
                <Text size="sm">
                  {ended(task) ? "Took" : "Running for"} <b>{formatDuration(elapsed(task, now))}</b>
                </Text>
              )}
            </Group>
            {task.status === "waiting" && (task.type === "approval" || task.type === "manual") && <WaitingAction team={team} run={run} task={task} />}
            {child && (
              <Text size="sm">
                Started the child run{" "}
                <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/runs/${encodeURIComponent(child)}`}>
                  {child}
                </Anchor>
              </Text>
            )}
            <Values title="Params" values={task.params} empty="No params." />
            <Values title="Results" values={task.results} empty={ended(task) ? "No results." : "No results yet."} />
            <Stack gap={4}>
              <Title order={3} size="h5">
                Log
              </Title>
              {task.id && <TaskLog key={task.id} taskRunId={task.id} taskName={name} started={started} over={ended(task)} />}
            </Stack>
          </>
        )}
      </Stack>
    </Paper>
  );
}
