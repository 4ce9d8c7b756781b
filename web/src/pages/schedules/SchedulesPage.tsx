import { Anchor, Button, Center, Code, Group, Loader, Pagination, Stack, Switch, Table, Text, Title } from "@mantine/core";
import { IconPlus } from "@tabler/icons-react";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useParams, useSearchParams } from "react-router";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { TintBadge } from "../actions/common";
import { useToggleSchedule } from "./mutations";
import { formatIn } from "./zone";

const PAGE_SIZE = 25;
/** How far ahead the list looks for each schedule's next fires. */
const AHEAD_MS = 31 * 86_400_000;

type Schedule = Schemas["WorkflowSchedule"];

/** SchedulesPage lists the team's schedules with their next fires in each one's zone. */
export default function SchedulesPage() {
  const { team = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const page = Math.max(1, Number(search.get("page") ?? "1") || 1);
  const schedules = useQuery({
    queryKey: ["schedules", team, "list", page],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/schedule/query", {
          params: { path: { team }, query: { limit: PAGE_SIZE, page: page - 1, statuses: ["active", "inactive", "completed"] } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const ids = (schedules.data?.content ?? []).filter((s) => s.status === "active" && s.id).map((s) => s.id!);
  const fires = useQuery({
    queryKey: ["schedules", team, "next", ids],
    enabled: ids.length > 0,
    queryFn: () => {
      const now = Date.now();
      return call(
        api.GET("/api/v2/team/{team}/schedule/calendars", {
          params: { path: { team }, query: { schedules: ids, fromDate: now, toDate: now + AHEAD_MS } },
        }),
      );
    },
    refetchInterval: 60_000,
  });
  const next = new Map((fires.data ?? []).map((c) => [c.scheduleId, c.dates ?? []]));
  const total = schedules.data?.totalElements ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const base = `/teams/${encodeURIComponent(team)}/schedules`;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Schedules</Title>
        <Button component={Link} to={`${base}/new`} leftSection={<IconPlus size={16} aria-hidden />}>
          New schedule
        </Button>
      </Group>
      {schedules.isPending && (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      )}
      {schedules.error && <ErrorAlert error={schedules.error} title="The schedules could not be read" />}
      {fires.error && <ErrorAlert error={fires.error} title="The next fires could not be read" />}
      {schedules.data && schedules.data.content.length === 0 && <Text c="dimmed">No schedules yet: a new one runs a workflow on a cron or once.</Text>}
      {schedules.data && schedules.data.content.length > 0 && (
        <Table.ScrollContainer minWidth={960}>
          <Table striped highlightOnHover aria-label="Schedules">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Workflow</Table.Th>
                <Table.Th>When</Table.Th>
                <Table.Th>Zone</Table.Th>
                <Table.Th>Next fires</Table.Th>
                <Table.Th>Enabled</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {schedules.data.content.map((s) => (
                <Row key={s.id} team={team} s={s} base={base} next={next.get(s.id) ?? []} loadingNext={fires.isPending && ids.length > 0} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {pages > 1 && (
        <Pagination
          total={pages}
          value={page}
          onChange={(p) => {
            const n = new URLSearchParams(search);
            if (p === 1) n.delete("page");
            else n.set("page", String(p));
            setSearch(n);
          }}
          getControlProps={(c) => ({ "aria-label": c === "previous" ? "Previous page" : c === "next" ? "Next page" : c })}
        />
      )}
    </Stack>
  );
}

function Row({ team, s, base, next, loadingNext }: { team: string; s: Schedule; base: string; next: string[]; loadingNext: boolean }) {
  const toggle = useToggleSchedule(team);
  const zone = s.timezone || "UTC";
  const name = s.name || s.workflowRef;
  return (
    <Table.Tr>
      <Table.Td>
        <Anchor component={Link} to={`${base}/${encodeURIComponent(s.id ?? "")}`}>
          {name}
        </Anchor>
        {s.triggerDisabled && (
          <TintBadge ml="xs" color="orange" title="The workflow's schedule trigger is off: it does not fire">
            trigger off
          </TintBadge>
        )}
      </Table.Td>
      <Table.Td>{s.workflowRef}</Table.Td>
      <Table.Td>{s.type === "runOnce" ? <Text size="sm">once, {s.dateSchedule ? formatIn(s.dateSchedule, zone) : "—"}</Text> : <Code>{s.cronSchedule}</Code>}</Table.Td>
      <Table.Td>{zone}</Table.Td>
      <Table.Td>
        {s.status !== "active" ? (
          <Text size="sm" c="dimmed">
            {s.status === "completed" ? "completed" : "none while disabled"}
          </Text>
        ) : loadingNext ? (
          <Loader size="xs" aria-label="Loading the next fires" />
        ) : next.length === 0 ? (
          <Text size="sm" c="dimmed">
            {s.nextScheduleDate ? formatIn(s.nextScheduleDate, zone) : "none in the next 31 days"}
          </Text>
        ) : (
          <Stack gap={0}>
            {next.slice(0, 3).map((d) => (
              <Text size="sm" key={d}>
                {formatIn(d, zone)}
              </Text>
            ))}
          </Stack>
        )}
      </Table.Td>
      <Table.Td>
        <Switch
          aria-label={`Enable ${name}`}
          checked={s.status === "active"}
          disabled={s.status === "completed" || toggle.isPending}
          onChange={(e) => toggle.mutate({ s, enabled: e.currentTarget.checked })}
        />
      </Table.Td>
    </Table.Tr>
  );
}

