import { Button, Group, MultiSelect, Select, Stack, TagsInput, TextInput, Title } from "@mantine/core";
import { IconFilterOff } from "@tabler/icons-react";
import { useQuery } from "@tanstack/react-query";
import { useParams, useSearchParams } from "react-router";
import {
  RUN_STATUSES,
  RUN_TRIGGERS,
  hasFilters,
  parseRunFilters,
  runFiltersToSearch,
  type RunFilters,
} from "./filters";
import { workflowNamesQuery } from "./queries";
import { RunsTable } from "./RunsTable";

/**
 * RunsPage lists the team's runs, newest first, filtered by status, workflow, trigger,
 * labels and creation dates. The filters and the page are the URL's query, so a filtered
 * list is a link to share.
 */
export default function RunsPage() {
  const { team = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const filters = parseRunFilters(search);
  // A change of filter goes back to the first page; paging alone keeps the filters.
  const update = (patch: Partial<RunFilters>) =>
    setSearch(runFiltersToSearch({ ...filters, page: 0, ...patch }));

  const workflows = useQuery(workflowNamesQuery(team));
  const workflowNames = (workflows.data?.content ?? []).map((w) => w.name ?? "").filter((n) => n !== "");

  return (
    <Stack>
      <Title order={1}>Runs</Title>
      <Group align="flex-end" gap="sm" role="search" aria-label="Filter runs">
        <MultiSelect
          label="Status"
          data={[...RUN_STATUSES]}
          value={filters.statuses}
          onChange={(statuses) => update({ statuses })}
          placeholder={filters.statuses.length ? undefined : "All"}
          clearable
          w={200}
        />
        <TagsInput
          label="Workflow"
          data={workflowNames}
          value={filters.workflows}
          onChange={(wf) => update({ workflows: wf })}
          placeholder={filters.workflows.length ? undefined : "All"}
          clearable
          w={200}
        />
        <MultiSelect
          label="Trigger"
          data={[...RUN_TRIGGERS]}
          value={filters.triggers}
          onChange={(triggers) => update({ triggers })}
          placeholder={filters.triggers.length ? undefined : "All"}
          clearable
          w={180}
        />
        <TagsInput
          label="Labels"
          value={filters.labels}
          onChange={(labels) => update({ labels })}
          placeholder={filters.labels.length ? undefined : "key=value"}
          clearable
          w={200}
        />
        <TextInput
          label="Created from"
          type="date"
          value={filters.from}
          max={filters.to || undefined}
          onChange={(e) => update({ from: e.currentTarget.value })}
          w={160}
        />
        <TextInput
          label="Created to"
          type="date"
          value={filters.to}
          min={filters.from || undefined}
          onChange={(e) => update({ to: e.currentTarget.value })}
          w={160}
        />
        <Select
          label="Order"
          data={[
            { value: "desc", label: "Newest first" },
            { value: "asc", label: "Oldest first" },
          ]}
          value={filters.order}
          allowDeselect={false}
          onChange={(v) => update({ order: v === "asc" ? "asc" : "desc" })}
          w={150}
        />
        {hasFilters(filters) && (
          <Button
            variant="subtle"
            leftSection={<IconFilterOff size={16} aria-hidden />}
            onClick={() => update({ statuses: [], workflows: [], triggers: [], labels: [], from: "", to: "" })}
          >
            Clear filters
          </Button>
        )}
      </Group>
      <RunsTable team={team} filters={filters} onPage={(page, size) => update({ page, size })} />
    </Stack>
  );
}
