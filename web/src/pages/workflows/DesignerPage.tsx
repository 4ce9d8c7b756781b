// The workflow designer: the catalogue, the graph, the inspector and the YAML view of one
// workflow document, saved as a new version with a changelog note. The URL holds what is
// shown: ?version= (the version read), ?task= or ?edge= (the selection), ?tab= (the
// inspector's tab), ?new=1 (a workflow not saved yet).
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Center,
  FileButton,
  Group,
  Loader,
  Menu,
  Modal,
  ScrollArea,
  Stack,
  Tabs,
  Text,
  Textarea,
  Title,
} from "@mantine/core";
import { IconChevronDown, IconDeviceFloppy, IconHistory, IconLayoutDistributeVertical } from "@tabler/icons-react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { ReactFlowProvider } from "@xyflow/react";
import { Suspense, lazy, memo, useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Link, useBlocker, useParams, useSearchParams } from "react-router";
import { ApiError, ErrorAlert, api, asApiError, call } from "../../api";
import { Catalogue, refOf, useCatalogue } from "./Catalogue";
import { Graph } from "./Graph";
import { EdgePanel, TaskPanel, WorkflowPanel } from "./Inspector";
import classes from "./designer.module.css";
import { download } from "./files";
import { autoLayout } from "./layout";
import {
  addTask,
  asApi,
  blank,
  clean,
  connect,
  disconnect,
  moveTasks,
  positionOf,
  problemsOf,
  removeTasks,
  renameTask,
  setCondition,
  setParam,
  tasksOf,
  updateTask,
  type CatalogueTask,
  type Position,
  type Problems,
  type Workflow,
} from "./model";
import { fromYaml, toYaml } from "./yaml";

const YamlEditor = lazy(() => import("./YamlEditor"));

const NO_PROBLEMS: Problems = { tasks: new Map(), edges: new Map(), other: [] };

/** sameBesidesTasks says whether two documents differ in their tasks at most. */
function sameBesidesTasks(a: Workflow, b: Workflow): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => k === "tasks" || (k in b && a[k] === b[k]));
}

/**
 * WorkflowForm is the workflow tab, which shows no task: a change of tasks alone (the end of
 * a drag on the canvas) does not render its form again. Its changes keep the document's
 * tasks as they are then (see onWorkflowChange), not as they were at its last render.
 */
/** CatalogueList is the catalogue, rendered again only when its team or handler changes. */
const CatalogueList = memo(Catalogue);

const WorkflowForm = memo(
  WorkflowPanel,
  (a, b) => a.problems === b.problems && a.onChange === b.onChange && sameBesidesTasks(a.workflow, b.workflow),
);
const YAML_DEBOUNCE_MS = 300;

/** selectedPosition is where the selected task sits, when it has a stored position. */
function selectedPosition(w: Workflow, name: string): Position | undefined {
  const t = tasksOf(w).find((x) => x.name === name);
  return t ? positionOf(t) : undefined;
}

export default function DesignerPage() {
  const { team = "", name = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const version = search.get("version") ?? undefined;
  const isNew = search.get("new") === "1";
  // What the last save, validation or import did; kept in the page (not a toast) so that it
  // stays readable and announced, and here, so that it outlives the reload after a save.
  const [status, setStatus] = useState<string>();

  const loaded = useQuery({
    queryKey: ["workflow", team, name, version ?? "latest"],
    queryFn: async () => {
      try {
        return await call(
          api.GET("/api/v2/team/{team}/workflow/{name}", {
            params: { path: { team, name }, query: version ? { version: Number(version) } : {} },
          }),
        );
      } catch (e) {
        // A workflow not saved yet starts from a start and an end.
        if (isNew && !version && e instanceof ApiError && e.reason === "WORKFLOW_NOT_FOUND") return null;
        throw e;
      }
    },
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });

  if (loaded.isPending)
    return (
      <Center p="xl">
        <Loader aria-label="Loading the workflow" />
      </Center>
    );
  if (loaded.error)
    return (
      <Stack>
        <Title order={1}>{name}</Title>
        <ErrorAlert error={loaded.error} title="The workflow could not be read" />
      </Stack>
    );
  const doc = loaded.data ? clean(loaded.data) : blank(name);
  return (
    <ReactFlowProvider>
      <Designer
        key={`${team}/${name}/${loaded.data?.version ?? "new"}`}
        team={team}
        name={name}
        initial={doc}
        version={loaded.data?.version}
        viewingOld={version !== undefined}
        search={search}
        setSearch={setSearch}
        status={status}
        setStatus={setStatus}
      />
    </ReactFlowProvider>
  );
}

interface DesignerProps {
  team: string;
  name: string;
  initial: Workflow;
  version?: number;
  viewingOld: boolean;
  search: URLSearchParams;
  setSearch: ReturnType<typeof useSearchParams>[1];
  status?: string;
  setStatus: (s: string | undefined) => void;
}

function Designer({ team, name, initial, version, viewingOld, search, setSearch, status, setStatus }: DesignerProps) {
  const queryClient = useQueryClient();
  const catalogue = useCatalogue(team);
  const [doc, setDoc] = useState<Workflow>(initial);
  const [base, setBase] = useState(() => JSON.stringify(initial));
  const dirty = JSON.stringify(doc) !== base;
  const [problems, setProblems] = useState<Problems>(NO_PROBLEMS);
  const [saveError, setSaveError] = useState<unknown>();
  const [saving, setSaving] = useState<"save" | "validate" | undefined>();
  const [noteOpen, setNoteOpen] = useState(false);
  const [note, setNote] = useState("");

  const selectedTask = search.get("task") ?? undefined;
  const selectedEdge = search.get("edge") ?? undefined;
  const tab = search.get("tab") ?? (selectedTask || selectedEdge ? "selection" : "workflow");

  const setParams = useCallback(
    (patch: Record<string, string | undefined>) =>
      setSearch(
        (s) => {
          const n = new URLSearchParams(s);
          for (const [k, v] of Object.entries(patch)) {
            if (v === undefined) n.delete(k);
            else n.set(k, v);
          }
          return n;
        },
        { replace: true },
      ),
    [setSearch],
  );

  // The YAML view: regenerated from the document when the document changed elsewhere; its
  // own edits are parsed (debounced) into the document, or leave it as it was and show why.
  const [yamlText, setYamlText] = useState(() => toYaml(initial));
  const [yamlError, setYamlError] = useState<string>();
  const fromYaml$ = useRef(false);
  const yamlTimer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const showYaml = tab === "yaml";
  useEffect(() => {
    if (fromYaml$.current) {
      fromYaml$.current = false;
      return;
    }
    if (!showYaml) return;
    setYamlText(toYaml(doc));
    setYamlError(undefined);
  }, [doc, showYaml]);
  const onYaml = useCallback((text: string) => {
    setYamlText(text);
    clearTimeout(yamlTimer.current);
    yamlTimer.current = setTimeout(() => {
      const r = fromYaml(text);
      if (!r.ok) {
        setYamlError(r.error);
        return;
      }
      setYamlError(undefined);
      fromYaml$.current = true;
      setDoc(r.workflow);
    }, YAML_DEBOUNCE_MS);
  }, []);
  useEffect(() => () => clearTimeout(yamlTimer.current), []);

  const edit = useCallback((f: (w: Workflow) => Workflow) => setDoc((w) => f(w)), []);
  const onWorkflowChange = useCallback((n: Workflow) => setDoc((w) => ({ ...n, tasks: w.tasks })), []);

  const centre = useRef<() => Position>(() => ({ x: 0, y: 0 }));
  const onViewportCentre = useCallback((f: () => Position) => {
    centre.current = f;
  }, []);

  const add = useCallback(
    (t: CatalogueTask, at?: Position) => {
      let where = at;
      if (!where) {
        const sel = selectedTask ? selectedPosition(doc, selectedTask) : undefined;
        where = sel ? { x: sel.x + 40, y: sel.y + 110 } : centre.current();
      }
      const [next, added] = addTask(doc, t, where);
      setDoc(next);
      setParams({ task: added, edge: undefined, tab: undefined });
    },
    [doc, selectedTask, setParams],
  );
  // The catalogue adds through the latest add (which reads the document and the selection)
  // with a handler that stays the same, so that an edit does not render the catalogue again.
  const addRef = useRef(add);
  addRef.current = add;
  const onAddFromCatalogue = useCallback((t: CatalogueTask) => addRef.current(t), []);
  const onDropTask = useCallback(
    (ref: string, at: Position) => {
      const t = catalogue.data?.find((c) => refOf(c) === ref);
      if (t) add(t, at);
    },
    [catalogue.data, add],
  );

  const onSelectTask = useCallback(
    (n: string | undefined) => setParams({ task: n, edge: undefined, tab: tab === "yaml" ? "yaml" : undefined }),
    [setParams, tab],
  );
  const onSelectEdge = useCallback(
    (id: string | undefined) => {
      if (id === undefined) {
        if (search.has("edge")) setParams({ edge: undefined });
        return;
      }
      setParams({ edge: id, task: undefined, tab: tab === "yaml" ? "yaml" : undefined });
    },
    [setParams, tab, search],
  );
  const onMove = useCallback((moves: Map<string, Position>) => edit((w) => moveTasks(w, moves)), [edit]);
  const onConnect = useCallback((s: string, t: string) => edit((w) => connect(w, s, t)), [edit]);
  const onDeleteTasks = useCallback(
    (names: string[]) => {
      edit((w) => removeTasks(w, names));
      setParams({ task: undefined });
    },
    [edit, setParams],
  );
  const onDeleteEdges = useCallback(
    (es: { source: string; target: string }[]) => {
      edit((w) => es.reduce((acc, e) => disconnect(acc, e.source, e.target), w));
      setParams({ edge: undefined });
    },
    [edit, setParams],
  );

  // Leaving with unsaved changes asks first.
  const blocker = useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
  useEffect(() => {
    if (!dirty) return;
    const f = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener("beforeunload", f);
    return () => window.removeEventListener("beforeunload", f);
  }, [dirty]);

  const save = async (dryRun: boolean) => {
    setSaving(dryRun ? "validate" : "save");
    setSaveError(undefined);
    setStatus(undefined);
    const sent = doc;
    const body = dryRun ? sent : { ...sent, changelog: { reason: note.trim() || undefined } };
    try {
      const saved = await call(
        api.PUT("/api/v2/team/{team}/workflow", {
          params: { path: { team }, query: dryRun ? { dryRun: true } : {} },
          body: asApi(body),
        }),
      );
      setProblems(NO_PROBLEMS);
      if (dryRun) {
        setStatus(`The workflow is valid: saving it makes version ${saved.version ?? "?"}.`);
        return;
      }
      setNoteOpen(false);
      setNote("");
      const unchanged = saved.version === version && !viewingOld;
      setStatus(unchanged ? `Nothing to save: version ${saved.version} holds this already.` : `Saved as version ${saved.version}.`);
      // The designer then reloads from what the server saved (pinned task versions included).
      setBase(JSON.stringify(sent));
      queryClient.setQueryData(["workflow", team, name, "latest"], saved);
      void queryClient.invalidateQueries({ queryKey: ["workflow-changelog", team, name] });
      void queryClient.invalidateQueries({ queryKey: ["workflows", team] });
      setParams({ new: undefined, version: undefined });
    } catch (e) {
      const err = asApiError(e);
      setSaveError(err);
      setProblems(problemsOf(sent, err.fieldErrors));
      if (!dryRun) setNoteOpen(false);
    } finally {
      setSaving(undefined);
    }
  };

  const exportJson = async () => {
    try {
      const w = await call(api.GET("/api/v2/team/{team}/workflow/{name}/export", { params: { path: { team, name } } }));
      download(`${name}.json`, JSON.stringify(w, null, 2) + "\n", "application/json");
    } catch (e) {
      setSaveError(e);
    }
  };
  const importFile = async (f: File | null) => {
    if (!f) return;
    const r = fromYaml(await f.text());
    if (!r.ok) {
      setYamlError(r.error);
      setParams({ tab: "yaml" });
      return;
    }
    setDoc({ ...clean(r.workflow), name });
    setStatus(`${f.name} replaces what the designer holds: save to make it a version.`);
  };

  const selected = selectedTask ? tasksOf(doc).find((t) => t.name === selectedTask) : undefined;
  const [edgeSource, edgeTarget] = selectedEdge?.split("->") ?? [];
  const problemCount = useMemo(
    () => [...problems.tasks.values(), ...problems.edges.values()].reduce((n, l) => n + l.length, 0) + problems.other.length,
    [problems],
  );

  return (
    <Stack gap="xs">
      <Group justify="space-between" wrap="nowrap">
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/workflows`} size="sm">
            Workflows
          </Anchor>
          <Text size="sm" aria-hidden>
            /
          </Text>
          <Title order={1} size="h3" style={{ whiteSpace: "nowrap", overflow: "hidden", textOverflow: "ellipsis" }}>
            {doc.displayName || name}
          </Title>
          {version !== undefined ? <Badge variant="light">version {version}</Badge> : <Badge color="gray">not saved yet</Badge>}
          {dirty && (
            <Badge color="yellow" variant="dot">
              unsaved changes
            </Badge>
          )}
          {problemCount > 0 && (
            <Badge color="red" variant="dot">
              {problemCount} {problemCount === 1 ? "problem" : "problems"}
            </Badge>
          )}
        </Group>
        <Group gap="xs" wrap="nowrap">
          <Button
            variant="default"
            size="xs"
            leftSection={<IconLayoutDistributeVertical size={16} aria-hidden />}
            onClick={() => edit((w) => moveTasks(w, autoLayout(w)))}
          >
            Auto layout
          </Button>
          <Button variant="default" size="xs" loading={saving === "validate"} onClick={() => void save(true)}>
            Validate
          </Button>
          <Menu position="bottom-end">
            <Menu.Target>
              <Button variant="default" size="xs" rightSection={<IconChevronDown size={14} aria-hidden />}>
                File
              </Button>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item onClick={() => download(`${name}.yaml`, toYaml(doc), "application/yaml")}>Download YAML</Menu.Item>
              <Menu.Item disabled={version === undefined} onClick={() => void exportJson()}>
                Export saved version (JSON)
              </Menu.Item>
              <FileButton onChange={(f) => void importFile(f)} accept=".yaml,.yml,.json,application/json,application/yaml">
                {(props) => (
                  <Menu.Item {...props} closeMenuOnClick>
                    Import a file…
                  </Menu.Item>
                )}
              </FileButton>
            </Menu.Dropdown>
          </Menu>
          {version !== undefined && (
            <Button
              component={Link}
              to={`/teams/${encodeURIComponent(team)}/workflows/${encodeURIComponent(name)}/versions`}
              variant="default"
              size="xs"
              leftSection={<IconHistory size={16} aria-hidden />}
            >
              History
            </Button>
          )}
          <Button size="xs" leftSection={<IconDeviceFloppy size={16} aria-hidden />} onClick={() => setNoteOpen(true)} disabled={saving !== undefined}>
            Save…
          </Button>
        </Group>
      </Group>
      {viewingOld && (
        <Alert color="blue" variant="light" p="xs">
          You are looking at version {version}. Saving it makes it the latest version again.
        </Alert>
      )}
      {saveError !== undefined && <ErrorAlert error={saveError} title="Not saved" />}
      {status && (
        <Alert color="green" variant="light" p="xs" role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setStatus(undefined)}>
          {status}
        </Alert>
      )}
      <div className={classes.layout}>
        <aside className={classes.side} aria-label="Task catalogue">
          <CatalogueList team={team} onAdd={onAddFromCatalogue} />
        </aside>
        <section className={classes.canvas} aria-label="Canvas">
          <Graph
            workflow={doc}
            problems={problems}
            selectedTask={selectedTask}
            selectedEdge={selectedEdge}
            onSelectTask={onSelectTask}
            onSelectEdge={onSelectEdge}
            onMove={onMove}
            onConnect={onConnect}
            onDeleteTasks={onDeleteTasks}
            onDeleteEdges={onDeleteEdges}
            onDropTask={onDropTask}
            onViewportCentre={onViewportCentre}
          />
        </section>
        <aside className={classes.inspector} aria-label="Inspector">
          <Tabs
            value={tab}
            onChange={(v) => setParams({ tab: v === "selection" && (selectedTask || selectedEdge) ? undefined : (v ?? undefined) })}
            style={{ display: "flex", flexDirection: "column", minHeight: 0, flex: 1 }}
            keepMounted={false}
          >
            <Tabs.List>
              <Tabs.Tab value="selection">{selectedEdge ? "Edge" : "Task"}</Tabs.Tab>
              <Tabs.Tab value="workflow">Workflow</Tabs.Tab>
              <Tabs.Tab value="yaml" color={yamlError ? "red" : undefined}>
                YAML
              </Tabs.Tab>
            </Tabs.List>
            <Tabs.Panel value="selection" style={{ flex: 1, minHeight: 0 }}>
              <ScrollArea h="100%" p="xs" type="auto">
                {selected ? (
                  <TaskPanel
                    key={selected.name}
                    workflow={doc}
                    task={selected}
                    catalogue={catalogue.data}
                    problems={problems}
                    onRename={(to) => {
                      const next = renameTask(doc, selected.name, to);
                      if (!next) return false;
                      setDoc(next);
                      setParams({ task: to });
                      return true;
                    }}
                    onParam={(k, v) => edit((w) => setParam(w, selected.name, k, v))}
                    onPatch={(patch) => edit((w) => updateTask(w, selected.name, patch))}
                    onCondition={(src, e, d) => edit((w) => setCondition(w, src, selected.name, e, d))}
                    onDisconnect={(src) => edit((w) => disconnect(w, src, selected.name))}
                    onDelete={() => onDeleteTasks([selected.name])}
                  />
                ) : edgeSource && edgeTarget ? (
                  <EdgePanel
                    workflow={doc}
                    source={edgeSource}
                    target={edgeTarget}
                    problems={problems}
                    onCondition={(e, d) => edit((w) => setCondition(w, edgeSource, edgeTarget, e, d))}
                    onDisconnect={() => onDeleteEdges([{ source: edgeSource, target: edgeTarget }])}
                  />
                ) : (
                  <Text size="sm" c="dimmed">
                    Select a task or an edge on the canvas to edit it.
                  </Text>
                )}
              </ScrollArea>
            </Tabs.Panel>
            <Tabs.Panel value="workflow" style={{ flex: 1, minHeight: 0 }}>
              <ScrollArea h="100%" p="xs" type="auto">
                <WorkflowForm workflow={doc} problems={problems} onChange={onWorkflowChange} />
              </ScrollArea>
            </Tabs.Panel>
            <Tabs.Panel value="yaml" style={{ flex: 1, minHeight: 0, display: "flex", flexDirection: "column" }}>
              {yamlError && (
                <Alert color="red" variant="light" p="xs" title="The YAML does not parse; the graph keeps the last good version" role="alert">
                  <Text size="xs" style={{ whiteSpace: "pre-wrap", fontFamily: "var(--mantine-font-family-monospace)" }}>
                    {yamlError}
                  </Text>
                </Alert>
              )}
              <div style={{ flex: 1, minHeight: 0, overflow: "auto" }}>
                <Suspense fallback={<Loader size="sm" aria-label="Loading the YAML editor" />}>
                  <YamlEditor value={yamlText} onChange={onYaml} label="Workflow YAML" />
                </Suspense>
              </div>
            </Tabs.Panel>
          </Tabs>
        </aside>
      </div>
      <Modal opened={noteOpen} onClose={() => setNoteOpen(false)} title="Save a new version">
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void save(false);
          }}
        >
          <Stack>
            <Textarea
              label="Changelog note"
              description="What changed and why; shown in the workflow's history."
              autosize
              minRows={2}
              data-autofocus
              value={note}
              onChange={(e) => setNote(e.currentTarget.value)}
            />
            <Group justify="flex-end">
              <Button variant="default" onClick={() => setNoteOpen(false)}>
                Cancel
              </Button>
              <Button type="submit" loading={saving === "save"}>
                Save version
              </Button>
            </Group>
          </Stack>
        </form>
      </Modal>
      <Modal opened={blocker.state === "blocked"} onClose={() => blocker.reset?.()} title="Leave without saving?">
        <Stack>
          <Text size="sm">The designer has changes that are not saved; leaving loses them.</Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={() => blocker.reset?.()}>
              Stay
            </Button>
            <Button color="red" onClick={() => blocker.proceed?.()}>
              Leave
            </Button>
          </Group>
        </Stack>
      </Modal>
    </Stack>
  );
}
