import { Anchor, Center, Group, Loader, Pagination, Select, Stack, Table, Text, Title } from "@mantine/core";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { Link, useParams, useSearchParams } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { ActionStatusBadge, actionTypeLabel, formatDate, TintBadge } from "./common";

const PAGE_SIZE = 25;

const typeOptions = [
  { value: "all", label: "All types" },
  { value: "approval", label: "Approvals" },
  { value: "manual", label: "Manual tasks" },
];
const statusOptions = [
  { value: "submitted", label: "Pending" },
  { value: "approved", label: "Approved" },
  { value: "rejected", label: "Rejected" },
  { value: "cancelled", label: "Cancelled" },
  { value: "all", label: "Any status" },
];

/**
 * ActionsPage is the team's inbox of approvals and manual tasks, newest first; its filters
 * (type, status, workflow) and page are in the URL. Pending ones are shown unless asked.
 */
export default function ActionsPage() {
  const { team = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const type = search.get("type") ?? "all";
  const status = search.get("status") ?? "submitted";
  const workflow = search.get("workflow") ?? "";
  const page = Math.max(1, Number(search.get("page") ?? "1") || 1);

  const set = (key: string, value: string | null, def: string) => {
    const next = new URLSearchParams(search);
    if (value === null || value === def) next.delete(key);
    else next.set(key, value);
    next.delete("page");
    setSearch(next);
  };

  const workflows = useQuery({
    queryKey: ["workflows", team, "names"],
    queryFn: () =>
      call(api.GET("/api/v2/team/{team}/workflow/query", { params: { path: { team }, query: { limit: 1000 } } })),
    staleTime: 60_000,
  });
  const actions = useQuery({
    queryKey: ["actions", team, "list", type, status, workflow, page],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/action/query", {
          params: {
            path: { team },
            query: {
              limit: PAGE_SIZE,
              page: page - 1,
              sort: "creationDate",
              order: "DESC",
              ...(type !== "all" ? { types: [type] } : {}),
              ...(status !== "all" ? { statuses: [status] } : {}),
              ...(workflow ? { workflows: [workflow] } : {}),
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: 30_000,
  });
  const workflowOptions = (workflows.data?.content ?? []).map((w) => ({
    value: w.name,
    label: w.displayName || w.name,
  }));
  if (workflow && !workflowOptions.some((o) => o.value === workflow)) workflowOptions.unshift({ value: workflow, label: workflow });
  const total = actions.data?.totalElements ?? 0;
  const pages = Math.max(1, Math.ceil(total / PAGE_SIZE));
  const base = `/teams/${encodeURIComponent(team)}`;

  return (
    <Stack>
      <Title order={1}>Actions</Title>
      <Group align="end">
        <Select label="Type" data={typeOptions} value={type} onChange={(v) => set("type", v, "all")} allowDeselect={false} w={180} />
        <Select
          label="Status"
          data={statusOptions}
          value={status}
          onChange={(v) => set("status", v, "submitted")}
          allowDeselect={false}
          w={180}
        />
        <Select
          label="Workflow"
          placeholder="All workflows"
          data={workflowOptions}
          value={workflow || null}
          onChange={(v) => set("workflow", v, "")}
          searchable
          clearable
          w={260}
          nothingFoundMessage="No such workflow"
        />
      </Group>
      {actions.isPending && (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      )}
      {actions.error && <ErrorAlert error={actions.error} title="The actions could not be read" />}
      {actions.data && actions.data.content.length === 0 && (
        <Text c="dimmed">{status === "submitted" ? "Nothing waits for a decision." : "No actions match these filters."}</Text>
      )}
      {actions.data && actions.data.content.length > 0 && (
        <Table.ScrollContainer minWidth={900}>
          <Table striped highlightOnHover aria-label="Actions">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Action</Table.Th>
                <Table.Th>Type</Table.Th>
                <Table.Th>Status</Table.Th>
                <Table.Th>Workflow</Table.Th>
                <Table.Th>Run</Table.Th>
                <Table.Th>Approvals</Table.Th>
                <Table.Th>Created</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {actions.data.content.map((a) => (
                <Table.Tr key={a.id}>
                  <Table.Td>
                    <Anchor component={Link} to={`${base}/actions/${encodeURIComponent(a.id ?? "")}`}>
                      {a.taskName || a.id}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <TintBadge color={a.type === "manual" ? "grape" : "blue"}>
                      {actionTypeLabel(a.type)}
                    </TintBadge>
                  </Table.Td>
                  <Table.Td>
                    <ActionStatusBadge status={a.status} />
                  </Table.Td>
                  <Table.Td>{a.workflowName || a.workflowRef}</Table.Td>
                  <Table.Td>
                    {a.workflowRunRef && (
                      <Anchor
                        component={Link}
                        to={`${base}/runs/${encodeURIComponent(a.workflowRunRef)}?task=${encodeURIComponent(a.taskName ?? "")}`}
                        ff="monospace"
                        size="sm"
                      >
                        {a.workflowRunRef.slice(0, 13)}…
                      </Anchor>
                    )}
                  </Table.Td>
                  <Table.Td>{a.type === "approval" ? `${a.numberOfApprovals ?? 0} of ${a.numberOfApprovers ?? 1}` : "—"}</Table.Td>
                  <Table.Td>{formatDate(a.creationDate)}</Table.Td>
                </Table.Tr>
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
            const next = new URLSearchParams(search);
            if (p === 1) next.delete("page");
            else next.set("page", String(p));
            setSearch(next);
          }}
          getControlProps={(c) => ({ "aria-label": c === "previous" ? "Previous page" : c === "next" ? "Next page" : c })}
        />
      )}
    </Stack>
  );
}
