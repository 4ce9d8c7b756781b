// The task catalogue beside the canvas: the global tasks and the team's, searchable and
// grouped by category; a task is added by a click (or Enter) or dragged onto the canvas.
import { Center, Chip, Group, Loader, ScrollArea, Stack, Text, TextInput, Title } from "@mantine/core";
import { IconSearch } from "@tabler/icons-react";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, call, ErrorAlert } from "../../api";
import { CATALOGUE_MIME } from "./Graph";
import classes from "./designer.module.css";
import type { CatalogueTask } from "./model";

/** refOf is how a workflow names a catalogue task: its name, or `<team>/<name>` for a team's. */
export const refOf = (t: CatalogueTask) => (t.scope === "team" && t.team ? `${t.team}/${t.name}` : t.name);

/** useCatalogue reads the active global tasks and the team's, the team's first. */
export function useCatalogue(team: string) {
  return useQuery({
    queryKey: ["catalogue", team],
    queryFn: async () => {
      const [global, own] = await Promise.all([
        call(api.GET("/api/v2/task/query", { params: { query: { limit: 1000, statuses: ["active"] } } })),
        call(api.GET("/api/v2/team/{team}/task/query", { params: { path: { team }, query: { limit: 1000, statuses: ["active"] } } })),
      ]);
      const teamTasks = (own.content as unknown as CatalogueTask[]).map((t) => ({ ...t, scope: "team", team: t.team || team }));
      return [...teamTasks, ...(global.content as unknown as CatalogueTask[])];
    },
    staleTime: 60_000,
  });
}

const UNCATEGORISED = "other";

export function Catalogue({ team, onAdd }: { team: string; onAdd: (t: CatalogueTask) => void }) {
  const tasks = useCatalogue(team);
  const [search, setSearch] = useState("");
  const [category, setCategory] = useState<string>("all");
  const categories = useMemo(
    () => [...new Set((tasks.data ?? []).map((t) => t.category || UNCATEGORISED))].sort(),
    [tasks.data],
  );
  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return (tasks.data ?? []).filter(
      (t) =>
        (category === "all" || (t.category || UNCATEGORISED) === category) &&
        (q === "" || [t.name, t.displayName, t.description, t.category].some((s) => s?.toLowerCase().includes(q))),
    );
  }, [tasks.data, search, category]);

  return (
    <Stack gap="xs" p="xs" style={{ minHeight: 0, flex: 1 }}>
      <Title order={2} size="h5">
        Task catalogue
      </Title>
      <TextInput
        aria-label="Search the catalogue"
        placeholder="Search tasks"
        leftSection={<IconSearch size={14} aria-hidden />}
        value={search}
        onChange={(e) => setSearch(e.currentTarget.value)}
      />
      <Chip.Group multiple={false} value={category} onChange={(v) => setCategory(v)}>
        <Group gap={4} role="radiogroup" aria-label="Category">
          {["all", ...categories].map((c) => (
            <Chip key={c} value={c} size="xs">
              {c}
            </Chip>
          ))}
        </Group>
      </Chip.Group>
      {tasks.isPending && (
        <Center>
          <Loader size="sm" aria-label="Loading the catalogue" />
        </Center>
      )}
      {tasks.error && <ErrorAlert error={tasks.error} title="The catalogue could not be read" />}
      <ScrollArea style={{ flex: 1 }} type="auto">
        <ul aria-label="Catalogue tasks" style={{ listStyle: "none", margin: 0, padding: 0 }}>
          {shown.map((t) => (
            <li key={refOf(t)}>
              <button
                type="button"
                className={classes.catalogueItem}
                draggable
                onDragStart={(e) => {
                  e.dataTransfer.setData(CATALOGUE_MIME, refOf(t));
                  e.dataTransfer.effectAllowed = "copy";
                }}
                onClick={() => onAdd(t)}
                aria-label={`Add ${t.displayName || t.name}`}
                title={t.description}
              >
                <Text size="sm" fw={500} component="span" display="block">
                  {t.displayName || t.name}
                </Text>
                <Text size="xs" c="dimmed" component="span" display="block">
                  {t.scope === "team" ? `team · ${t.category || UNCATEGORISED}` : t.category || UNCATEGORISED}
                </Text>
              </button>
            </li>
          ))}
        </ul>
        {tasks.data && shown.length === 0 && (
          <Text size="sm" c="dimmed">
            No task matches.
          </Text>
        )}
      </ScrollArea>
    </Stack>
  );
}
