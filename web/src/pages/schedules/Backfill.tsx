import { Alert, Anchor, Button, Card, Center, Group, Loader, Stack, Table, Text, TextInput, Title } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { TintBadge } from "../actions/common";
import { formatIn, parseLocal, toLocalInput } from "./zone";

// The colours of run statuses, as the runs pages show them.
const runColors: Record<string, string> = { running: "blue", waiting: "yellow", succeeded: "green", failed: "red", invalid: "red", cancelled: "orange", timedout: "red" };

/**
 * Backfill makes the runs of a past window's fires (POST /schedule/{id}/backfill): the window
 * is typed in the schedule's zone, the API's answer (fires in the window, runs made now) is
 * shown, then the schedule's workflow's latest scheduled runs.
 */
export function Backfill({ team, scheduleId, workflow, zone }: { team: string; scheduleId: string; workflow: string; zone: string }) {
  const qc = useQueryClient();
  const [from, setFrom] = useState(() => toLocalInput(Date.now() - 3 * 3_600_000, zone));
  const [to, setTo] = useState(() => toLocalInput(Date.now(), zone));
  const [errors, setErrors] = useState<{ from?: string; to?: string }>({});
  const backfill = useMutation({
    mutationFn: (w: { fromDate: number; toDate: number }) =>
      call(
        api.POST("/api/v2/team/{team}/schedule/{scheduleId}/backfill", {
          params: { path: { team, scheduleId } },
          body: { fromDate: new Date(w.fromDate).toISOString(), toDate: new Date(w.toDate).toISOString() },
        }),
      ),
    onSuccess: () => void qc.invalidateQueries({ queryKey: ["schedules", team, "runs", workflow] }),
  });
  const runs = useQuery({
    queryKey: ["schedules", team, "runs", workflow],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/workflowrun/query", {
          params: { path: { team }, query: { workflows: [workflow], triggers: ["schedule"], limit: 20 } },
        }),
      ),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const f = parseLocal(from, zone);
    const t = parseLocal(to, zone);
    const errs: { from?: string; to?: string } = {};
    if (f === null) errs.from = "Choose when the window starts";
    if (t === null) errs.to = "Choose when the window ends";
    if (f !== null && t !== null && t < f) errs.to = "The window ends before it starts";
    setErrors(errs);
    if (Object.keys(errs).length === 0) backfill.mutate({ fromDate: f!, toDate: t! });
  };
  const base = `/teams/${encodeURIComponent(team)}`;
  return (
    <Stack>
      <Card withBorder component="form" onSubmit={submit} noValidate aria-label="Backfill a window">
        <Stack>
          <Title order={2} size="h4">
            Backfill a window
          </Title>
          <Text size="sm" c="dimmed">
            One run for each time the schedule would have fired in the window, oldest first. Fires that already made their
            run make none again. The window is in the past, at most 366 days and 1,000 fires.
          </Text>
          <Group align="start">
            <TextInput type="datetime-local" label={`From (${zone})`} value={from} onChange={(e) => setFrom(e.currentTarget.value)} error={errors.from} required />
            <TextInput type="datetime-local" label={`To (${zone})`} value={to} onChange={(e) => setTo(e.currentTarget.value)} error={errors.to} required />
          </Group>
          {backfill.error && <ErrorAlert error={backfill.error} title="Not backfilled" />}
          {backfill.data && (
            <Alert color="green" title="Backfilled" data-testid="backfill-result" styles={{ title: { color: "var(--mantine-color-text)" } }}>
              The window held {backfill.data.runs} fire{backfill.data.runs === 1 ? "" : "s"}; {backfill.data.created} run
              {backfill.data.created === 1 ? " was" : "s were"} created now
              {backfill.data.runs > backfill.data.created ? ` (${backfill.data.runs - backfill.data.created} had their run already)` : ""}.
            </Alert>
          )}
          <Group>
            <Button type="submit" loading={backfill.isPending}>
              Backfill
            </Button>
          </Group>
        </Stack>
      </Card>
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Latest scheduled runs of {workflow}
        </Title>
        {runs.isPending ? (
          <Center>
            <Loader size="sm" aria-label="Loading the runs" />
          </Center>
        ) : runs.error ? (
          <ErrorAlert error={runs.error} title="The runs could not be read" />
        ) : runs.data.content.length === 0 ? (
          <Text c="dimmed" size="sm">
            No scheduled runs yet.
          </Text>
        ) : (
          <Table aria-label="Scheduled runs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Run</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {runs.data.content.map((r) => (
                <Table.Tr key={r.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`${base}/runs/${encodeURIComponent(r.id ?? "")}`} ff="monospace" size="sm">
                      {r.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <TintBadge color={runColors[r.status ?? ""] ?? "gray"}>{r.status ?? "unknown"}</TintBadge>
                  </Table.Td>
                  <Table.Td>{r.creationDate ? formatIn(r.creationDate, zone) : "—"}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Card>
    </Stack>
  );
}
