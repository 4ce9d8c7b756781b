// The team's workflows: searched by text (name, display name, description), filtered by
// labels and status (the API's filters), each opening the designer. The filters live in the
// URL (?q=, ?labels=k=v,…, ?status=). New workflows start in the designer; files import.
import {
  Anchor,
  Badge,
  Button,
  Center,
  FileButton,
  Group,
  Loader,
  Modal,
  SegmentedControl,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from "@mantine/core";
import { IconFileImport, IconPlus, IconSearch } from "@tabler/icons-react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";
import { ErrorAlert, api, call } from "../../api";
import { asApi, clean } from "./model";
import { fromYaml } from "./yaml";

/** slug makes a free-text name a workflow name, as the API does on create. */
export function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[\s_]+/g, "-")
    .replace(/[^a-z0-9-]/g, "")
    .slice(0, 64);
}

export default function WorkflowsPage() {
  const { team = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const q = search.get("q") ?? "";
  const labels = search.get("labels") ?? "";
  const status = search.get("status") ?? "all";
  const [labelsDraft, setLabelsDraft] = useState(labels);
  const [creating, setCreating] = useState(false);
  const [newName, setNewName] = useState("");

  const setFilter = (k: string, v: string) =>
    setSearch(
      (s) => {
        const n = new URLSearchParams(s);
        if (v === "" || (k === "status" && v === "all")) n.delete(k);
        else n.set(k, v);
        return n;
      },
      { replace: true },
    );

  const labelList = labels
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const workflows = useQuery({
    queryKey: ["workflows", team, labels, status],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/{team}/workflow/query", {
          params: {
            path: { team },
            query: {
              limit: 1000,
              ...(labelList.length > 0 ? { labels: labelList } : {}),
              ...(status !== "all" ? { statuses: [status] } : {}),
            },
          },
        }),
      ),
  });
  const shown = useMemo(() => {
    const needle = q.trim().toLowerCase();
    const list = workflows.data?.content ?? [];
    if (needle === "") return list;
    return list.filter((w) => [w.name, w.displayName, w.description].some((s) => s?.toLowerCase().includes(needle)));
  }, [workflows.data, q]);

  const importing = useMutation({
    mutationFn: async (f: File) => {
      const r = fromYaml(await f.text());
      if (!r.ok) throw new Error(`${f.name}: ${r.error}`);
      return call(api.POST("/api/v2/team/{team}/workflow", { params: { path: { team } }, body: asApi(clean(r.workflow)) }));
    },
    onSuccess: (w) => {
      void queryClient.invalidateQueries({ queryKey: ["workflows", team] });
      void navigate(`/teams/${encodeURIComponent(team)}/workflows/${encodeURIComponent(w.name)}`);
    },
  });

  const newSlug = slug(newName);
  const base = `/teams/${encodeURIComponent(team)}/workflows`;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1}>Workflows</Title>
        <Group gap="xs">
          <FileButton onChange={(f) => f && importing.mutate(f)} accept=".yaml,.yml,.json,application/json,application/yaml">
            {(props) => (
              <Button {...props} variant="default" leftSection={<IconFileImport size={16} aria-hidden />} loading={importing.isPending}>
                Import
              </Button>
            )}
          </FileButton>
          <Button leftSection={<IconPlus size={16} aria-hidden />} onClick={() => setCreating(true)}>
            New workflow
          </Button>
        </Group>
      </Group>
      {importing.error && <ErrorAlert error={importing.error} title="Not imported" />}
      <Group align="flex-end">
        <TextInput
          label="Search"
          placeholder="Name, display name or description"
          leftSection={<IconSearch size={14} aria-hidden />}
          value={q}
          onChange={(e) => setFilter("q", e.currentTarget.value)}
          w={280}
        />
        <TextInput
          label="Labels"
          placeholder="env=prod,team=infra"
          value={labelsDraft}
          onChange={(e) => setLabelsDraft(e.currentTarget.value)}
          onBlur={() => setFilter("labels", labelsDraft.trim())}
          onKeyDown={(e) => e.key === "Enter" && setFilter("labels", labelsDraft.trim())}
          w={240}
        />
        <div>
          <Text size="sm" fw={500} id="wf-status">
            Status
          </Text>
          <SegmentedControl
            aria-labelledby="wf-status"
            value={status}
            onChange={(v) => setFilter("status", v)}
            data={[
              { value: "all", label: "All" },
              { value: "active", label: "Active" },
              { value: "inactive", label: "Inactive" },
            ]}
          />
        </div>
      </Group>
      {workflows.isPending ? (
        <Center>
          <Loader aria-label="Loading" />
        </Center>
      ) : workflows.error ? (
        <ErrorAlert error={workflows.error} title="The workflows could not be read" />
      ) : shown.length === 0 ? (
        <Text>{(workflows.data?.content.length ?? 0) === 0 && q === "" ? "No workflows yet: create one, or import a file." : "No workflow matches."}</Text>
      ) : (
        <Table highlightOnHover>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Workflow</Table.Th>
              <Table.Th>Status</Table.Th>
              <Table.Th>Labels</Table.Th>
              <Table.Th>Version</Table.Th>
              <Table.Th>Tasks</Table.Th>
              <Table.Th>Last saved</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((w) => (
              <Table.Tr key={w.name}>
                <Table.Td>
                  <Anchor component={Link} to={`${base}/${encodeURIComponent(w.name)}`} fw={500}>
                    {w.displayName || w.name}
                  </Anchor>
                  {w.displayName && w.displayName !== w.name && (
                    <Text size="xs" c="dimmed">
                      {w.name}
                    </Text>
                  )}
                  {w.description && (
                    <Text size="xs" c="dimmed" lineClamp={1}>
                      {w.description}
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <Badge color={w.status === "inactive" ? "gray" : "green"} variant="dot">
                    {w.status ?? "active"}
                  </Badge>
                </Table.Td>
                <Table.Td>
                  <Group gap={4}>
                    {Object.entries(w.labels ?? {}).map(([k, v]) => (
                      <Badge
                        key={k}
                        variant="outline"
                        size="sm"
                        tt="none"
                        component="button"
                        style={{ cursor: "pointer" }}
                        aria-label={`Filter by label ${k}=${v}`}
                        onClick={() => {
                          const next = [...new Set([...labelList, `${k}=${v}`])].join(",");
                          setLabelsDraft(next);
                          setFilter("labels", next);
                        }}
                      >
                        {k}={v}
                      </Badge>
                    ))}
                  </Group>
                </Table.Td>
                <Table.Td>{w.version}</Table.Td>
                <Table.Td>{w.tasks?.length ?? ""}</Table.Td>
                <Table.Td>
                  <Text size="sm">{w.changelog?.date ? new Date(w.changelog.date).toLocaleString() : ""}</Text>
                  {w.changelog?.reason && (
                    <Text size="xs" c="dimmed" lineClamp={1}>
                      {w.changelog.reason}
                    </Text>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
      <Modal opened={creating} onClose={() => setCreating(false)} title="New workflow">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (newSlug === "") return;
            setCreating(false);
            void navigate(`${base}/${encodeURIComponent(newSlug)}?new=1`);
          }}
        >
          <Stack>
            <TextInput
              label="Name"
              description={newSlug && newSlug !== newName ? `Saved as ${newSlug}` : "Lower case letters, digits and dashes."}
              data-autofocus
              value={newName}
              onChange={(e) => setNewName(e.currentTarget.value)}
              required
            />
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setCreating(false)}>
                Cancel
              </Button>
              <Button type="submit" disabled={newSlug === ""}>
                Open the designer
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
    </Stack>
  );
}
