import { Anchor, Center, Group, Loader, Pagination, Select, Table, Text } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router";
import type { Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { StatusBadge } from "../../components/StatusBadge";
import { PAGE_SIZES, formatDuration, hasFilters, type RunFilters } from "./filters";
import { runsQuery } from "./queries";

type Run = Schemas["WorkflowRun"];

// Runs that may still change; a page showing one is read again every few seconds.
const active = new Set(["notstarted", "ready", "running", "waiting"]);

const when = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });

function started(r: Run): string | undefined {
  return r.startTime ?? r.creationDate;
}

function duration(r: Run, now: number): string {
  if (r.duration !== undefined && !active.has(r.status ?? "")) return formatDuration(r.duration);
  if (r.status === "running" && r.startTime) return formatDuration(now - Date.parse(r.startTime));
  return "";
}

export function RunsTable({
  team,
  filters,
  onPage,
}: {
  team: string;
  filters: RunFilters;
  onPage: (page: number, size: number) => void;
}) {
  const navigate = useNavigate();
  const runs = useQuery({
    ...runsQuery(team, filters),
    placeholderData: keepPreviousData,
    refetchInterval: (q) => (q.state.data?.content.some((r) => active.has(r.status ?? "")) ? 5_000 : false),
  });

  if (runs.isPending)
    return (
      <Center p="xl">
        <Loader aria-label="Loading runs" />
      </Center>
    );
  if (runs.error) return <ErrorAlert error={runs.error} title="The runs could not be read" />;

  const page = runs.data;
  if (page.totalElements === 0) {
    return <Text>{hasFilters(filters) ? "No run matches these filters." : "No runs yet."}</Text>;
  }
  const now = Date.now();
  const runPath = (id: string) => `/teams/${encodeURIComponent(team)}/runs/${encodeURIComponent(id)}`;
  return (
    <>
      <Table.ScrollContainer minWidth={760}>
        <Table highlightOnHover verticalSpacing="xs" aria-label="Runs" aria-busy={runs.isFetching}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Status</Table.Th>
              <Table.Th>Workflow</Table.Th>
              <Table.Th>Run</Table.Th>
              <Table.Th>Trigger</Table.Th>
              <Table.Th>Started</Table.Th>
              <Table.Th>Duration</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {page.content.map((r) => {
              const at = started(r);
              return (
                <Table.Tr
                  key={r.id}
                  style={{ cursor: "pointer" }}
                  onClick={(e) => {
                    // The run's link handles its own clicks (and new-tab clicks).
                    if ((e.target as HTMLElement).closest("a")) return;
                    if (r.id) navigate(runPath(r.id));
                  }}
                >
                  <Table.Td>
                    <StatusBadge status={r.status} />
                  </Table.Td>
                  <Table.Td>{r.workflowDisplayName || r.workflowName || r.workflowRef}</Table.Td>
                  <Table.Td>
                    {r.id && (
                      <Anchor component={Link} to={runPath(r.id)} ff="monospace" size="sm">
                        {r.id}
                      </Anchor>
                    )}
                  </Table.Td>
                  <Table.Td>{r.trigger}</Table.Td>
                  <Table.Td>{at && <time dateTime={at}>{when.format(new Date(at))}</time>}</Table.Td>
                  <Table.Td>{duration(r, now)}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
      <Group justify="space-between" wrap="wrap">
        <Text size="sm" aria-live="polite">
          {page.totalElements === 1 ? "1 run" : `${page.totalElements.toLocaleString()} runs`}
        </Text>
        <Group gap="sm">
          {page.totalPages > 1 && (
            <Pagination
              total={page.totalPages}
              value={filters.page + 1}
              onChange={(p) => onPage(p - 1, filters.size)}
              siblings={1}
              boundaries={1}
              getControlProps={(control) => ({ "aria-label": `${control} page` })}
              getItemProps={(p) => ({ "aria-label": `Page ${p}` })}
            />
          )}
          <Select
            aria-label="Runs per page"
            data={PAGE_SIZES.map((s) => ({ value: String(s), label: `${s} a page` }))}
            value={String(filters.size)}
            allowDeselect={false}
            onChange={(v) => onPage(0, Number(v))}
            w={120}
            size="xs"
          />
        </Group>
      </Group>
    </>
  );
}
