// The designer's inspector: the selected task (name, params form, edges), the selected edge
// (its condition) or the workflow itself (fields, params, triggers).
import {
  ActionIcon,
  Alert,
  Button,
  Checkbox,
  Divider,
  Group,
  List,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
  Textarea,
  Title,
} from "@mantine/core";
import { IconAlertTriangle, IconPlus, IconTrash } from "@tabler/icons-react";
import { useEffect, useState } from "react";
import { ParamForm, nameOf, type ParamDefinition } from "../../components/ParamForm";
import { refOf } from "./Catalogue";
import {
  edgeId,
  paramValues,
  tasksOf,
  type CatalogueTask,
  type Condition,
  type Dependency,
  type Param,
  type Problems,
  type Workflow,
  type WorkflowTask,
} from "./model";

/** definitionOf finds the catalogue task a workflow task runs: by its taskRef, else by its system type. */
export function definitionOf(t: WorkflowTask, catalogue: CatalogueTask[] | undefined): CatalogueTask | undefined {
  if (!catalogue) return undefined;
  if (t.taskRef) return catalogue.find((c) => refOf(c) === t.taskRef);
  return catalogue.find((c) => c.scope !== "team" && c.type === t.type && t.type !== "template");
}

function Problem({ messages }: { messages?: string[] }) {
  if (!messages || messages.length === 0) return null;
  return (
    <Alert color="red" variant="light" icon={<IconAlertTriangle aria-hidden />} title="Problems" role="alert">
      <List size="sm">
        {messages.map((m) => (
          <List.Item key={m}>{m}</List.Item>
        ))}
      </List>
    </Alert>
  );
}

/** A text field that commits on blur or Enter: renames must not happen a keystroke at a time. */
function CommitInput({ label, value, onCommit, error }: { label: string; value: string; onCommit: (v: string) => boolean; error?: string }) {
  const [draft, setDraft] = useState(value);
  const [bad, setBad] = useState<string>();
  useEffect(() => setDraft(value), [value]);
  const commit = () => {
    if (draft === value) return;
    if (!onCommit(draft)) setBad("Another task has this name, or it is empty.");
    else setBad(undefined);
  };
  return (
    <TextInput
      label={label}
      value={draft}
      error={bad ?? error}
      onChange={(e) => setDraft(e.currentTarget.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === "Enter") commit();
      }}
    />
  );
}

export function ConditionEditor({
  dependency,
  fromDecision,
  idPrefix,
  onChange,
}: {
  dependency: Dependency;
  fromDecision: boolean;
  idPrefix: string;
  onChange: (execution: Condition, decision: string) => void;
}) {
  const execution = (dependency.executionCondition ?? "always") as Condition;
  const [decision, setDecision] = useState(dependency.decisionCondition ?? "");
  useEffect(() => setDecision(dependency.decisionCondition ?? ""), [dependency.decisionCondition]);
  return (
    <Stack gap={6}>
      <div>
        <Text size="sm" fw={500} id={`${idPrefix}-exec`}>
          Runs when {dependency.taskRef}
        </Text>
        <SegmentedControl
          aria-labelledby={`${idPrefix}-exec`}
          size="xs"
          fullWidth
          value={execution}
          onChange={(v) => onChange(v as Condition, decision)}
          data={[
            { value: "always", label: "always" },
            { value: "success", label: "succeeds" },
            { value: "failure", label: "fails" },
          ]}
        />
      </div>
      {(fromDecision || decision !== "") && (
        <Textarea
          label="Decision values"
          description="One pattern per line (RE2, full match) of the decision value; empty is the default branch."
          autosize
          minRows={1}
          value={decision}
          onChange={(e) => setDecision(e.currentTarget.value)}
          onBlur={() => decision !== (dependency.decisionCondition ?? "") && onChange(execution, decision)}
        />
      )}
    </Stack>
  );
}

export interface TaskPanelProps {
  workflow: Workflow;
  task: WorkflowTask;
  catalogue: CatalogueTask[] | undefined;
  problems: Problems;
  onRename: (to: string) => boolean;
  onParam: (name: string, value: unknown) => void;
  onPatch: (patch: Partial<WorkflowTask>) => void;
  onCondition: (source: string, execution: Condition, decision: string) => void;
  onDisconnect: (source: string) => void;
  onDelete: () => void;
}

export function TaskPanel(p: TaskPanelProps) {
  const { task: t, workflow } = p;
  const def = definitionOf(t, p.catalogue);
  const defs: ParamDefinition[] = def?.spec?.params ?? [];
  const values = paramValues(t);
  const known = new Set(defs.map(nameOf));
  const extra = (t.params ?? []).filter((x) => !known.has(x.name));
  const typeOf = (name: string) => tasksOf(workflow).find((x) => x.name === name)?.type;
  const structural = t.type === "start" || t.type === "end";
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Task {t.name}
      </Title>
      <Problem messages={p.problems.tasks.get(t.name)} />
      <CommitInput label="Name" value={t.name} onCommit={p.onRename} />
      <Text size="sm" c="dimmed">
        {t.type}
        {t.taskRef ? ` · ${t.taskRef}` : ""}
        {t.taskVersion ? ` · version ${t.taskVersion}` : ""}
        {def?.description ? ` — ${def.description}` : ""}
      </Text>
      {!structural && (
        <>
          <Divider label="Parameters" labelPosition="left" />
          {p.catalogue === undefined ? (
            <Text size="sm">Reading the catalogue…</Text>
          ) : def === undefined && t.taskRef ? (
            <Text size="sm" c="red">
              The catalogue has no active task {t.taskRef}.
            </Text>
          ) : (
            <ParamForm params={defs} values={values} onChange={p.onParam} idPrefix={`task-${t.name}`} />
          )}
          {extra.length > 0 && (
            <Stack gap={4}>
              <Text size="sm" fw={500}>
                Other parameters
              </Text>
              {extra.map((x) => (
                <TextInput
                  key={x.name}
                  label={x.name}
                  value={typeof x.value === "string" ? x.value : JSON.stringify(x.value ?? "")}
                  onChange={(e) => p.onParam(x.name, e.currentTarget.value)}
                />
              ))}
            </Stack>
          )}
          <Divider label="Execution" labelPosition="left" />
          <Group grow>
            <NumberInput
              label="Timeout (min)"
              min={0}
              value={t.timeout ?? ""}
              onChange={(v) => p.onPatch({ timeout: v === "" ? undefined : Number(v) })}
            />
            <NumberInput
              label="Retries"
              min={0}
              value={t.retries ?? ""}
              onChange={(v) => p.onPatch({ retries: v === "" ? undefined : Number(v) })}
            />
          </Group>
        </>
      )}
      {t.type !== "start" && (
        <>
          <Divider label="Runs after" labelPosition="left" />
          <Select
            label="Join"
            description="Wait for every incoming edge to hold, or for any one."
            data={[
              { value: "all", label: "all" },
              { value: "any", label: "any" },
            ]}
            value={t.join ?? (t.type === "end" ? "any" : "all")}
            onChange={(v) => p.onPatch({ join: (v ?? undefined) as WorkflowTask["join"] })}
          />
          {(t.dependencies ?? []).length === 0 && (
            <Text size="sm" c="dimmed">
              Nothing: connect a task's bottom handle to this one's top handle.
            </Text>
          )}
          {(t.dependencies ?? []).map((d) => (
            <Group key={d.taskRef} align="flex-start" wrap="nowrap" gap="xs">
              <div style={{ flex: 1 }}>
                <Problem messages={p.problems.edges.get(edgeId(d.taskRef, t.name))} />
                <ConditionEditor
                  dependency={d}
                  fromDecision={typeOf(d.taskRef) === "decision"}
                  idPrefix={`dep-${d.taskRef}`}
                  onChange={(e, dc) => p.onCondition(d.taskRef, e, dc)}
                />
              </div>
              <ActionIcon variant="subtle" color="red" aria-label={`Remove the edge from ${d.taskRef}`} onClick={() => p.onDisconnect(d.taskRef)}>
                <IconTrash size={16} aria-hidden />
              </ActionIcon>
            </Group>
          ))}
        </>
      )}
      <Button variant="light" color="red" leftSection={<IconTrash size={16} aria-hidden />} onClick={p.onDelete}>
        Remove task
      </Button>
    </Stack>
  );
}

export function EdgePanel({
  workflow,
  source,
  target,
  problems,
  onCondition,
  onDisconnect,
}: {
  workflow: Workflow;
  source: string;
  target: string;
  problems: Problems;
  onCondition: (execution: Condition, decision: string) => void;
  onDisconnect: () => void;
}) {
  const t = tasksOf(workflow).find((x) => x.name === target);
  const d = t?.dependencies?.find((x) => x.taskRef === source);
  if (!d) return <Text>This edge is no longer in the workflow.</Text>;
  const fromDecision = tasksOf(workflow).find((x) => x.name === source)?.type === "decision";
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Edge {source} → {target}
      </Title>
      <Problem messages={problems.edges.get(edgeId(source, target))} />
      <ConditionEditor dependency={d} fromDecision={fromDecision} idPrefix="edge" onChange={onCondition} />
      <Button variant="light" color="red" leftSection={<IconTrash size={16} aria-hidden />} onClick={onDisconnect}>
        Remove edge
      </Button>
    </Stack>
  );
}

const PARAM_TYPES = ["text", "textarea", "email", "number", "url", "boolean", "password", "select", "multiselect", "json"];
const TRIGGERS = [
  ["manual", "Manual", "Runs submitted by people and the API."],
  ["schedule", "Schedule", "Runs from the team's schedules of this workflow."],
  ["webhook", "Webhook", "Runs from POST /webhook?ref=team/workflow."],
  ["event", "Event", "Runs from CloudEvents sent to /event."],
  ["codehost", "Code host", "Runs from the linked code host's deliveries."],
] as const;

type Triggers = NonNullable<Workflow["triggers"]>;

export function WorkflowPanel({
  workflow: w,
  problems,
  onChange,
}: {
  workflow: Workflow;
  problems: Problems;
  onChange: (w: Workflow) => void;
}) {
  const set = (patch: Partial<Workflow>) => {
    const n: Record<string, unknown> = { ...w, ...patch };
    for (const [k, v] of Object.entries(patch)) if (v === undefined || v === "") delete n[k];
    onChange(n as Workflow);
  };
  const params = w.params ?? [];
  const setParam = (i: number, patch: Partial<Param>) =>
    set({ params: params.map((x, j) => (j === i ? ({ ...x, ...patch } as Param) : x)) });
  const triggers = (w.triggers ?? {}) as Triggers;
  const enabled = (k: string) => {
    const tr = (triggers as Record<string, { enabled?: boolean } | undefined>)[k];
    return k === "manual" ? tr?.enabled !== false : tr?.enabled === true;
  };
  const setTrigger = (k: string, on: boolean) => {
    const old = (triggers as Record<string, object | undefined>)[k] ?? {};
    set({ triggers: { ...triggers, [k]: { ...old, enabled: on } } });
  };
  const [labels, setLabels] = useState(labelsText(w.labels));
  useEffect(() => setLabels(labelsText(w.labels)), [w.labels]);
  return (
    <Stack gap="sm">
      <Title order={2} size="h4">
        Workflow {w.name}
      </Title>
      <Problem messages={problems.other.length > 0 ? problems.other : undefined} />
      <TextInput label="Display name" value={w.displayName ?? ""} onChange={(e) => set({ displayName: e.currentTarget.value })} />
      <Textarea label="Description" autosize minRows={1} value={w.description ?? ""} onChange={(e) => set({ description: e.currentTarget.value })} />
      <Group grow>
        <Select
          label="Status"
          data={["active", "inactive"]}
          value={w.status ?? "active"}
          onChange={(v) => set({ status: (v ?? undefined) as Workflow["status"] })}
        />
        <NumberInput label="Timeout (min)" min={0} value={w.timeout ?? ""} onChange={(v) => set({ timeout: v === "" ? undefined : Number(v) })} />
        <NumberInput label="Retries" min={0} value={w.retries ?? ""} onChange={(v) => set({ retries: v === "" ? undefined : Number(v) })} />
      </Group>
      <Textarea
        label="Labels"
        description="One key=value a line."
        autosize
        minRows={1}
        value={labels}
        onChange={(e) => setLabels(e.currentTarget.value)}
        onBlur={() => set({ labels: parseLabels(labels) })}
      />
      <Divider label="Parameters" labelPosition="left" />
      {params.length === 0 && (
        <Text size="sm" c="dimmed">
          No parameters: runs take none.
        </Text>
      )}
      {params.map((x, i) => (
        <Stack key={i} gap={4} p="xs" style={{ border: "1px solid var(--mantine-color-default-border)", borderRadius: 4 }}>
          <Group grow gap="xs">
            <TextInput label="Name" value={x.name ?? ""} onChange={(e) => setParam(i, { name: e.currentTarget.value })} />
            <Select label="Type" data={PARAM_TYPES} value={x.type ?? "text"} onChange={(v) => setParam(i, { type: (v ?? "text") as Param["type"] })} />
          </Group>
          <Group grow gap="xs">
            <TextInput label="Label" value={x.label ?? ""} onChange={(e) => setParam(i, { label: e.currentTarget.value })} />
            <TextInput
              label="Default"
              value={x.default === undefined ? "" : typeof x.default === "string" ? x.default : JSON.stringify(x.default)}
              onChange={(e) => setParam(i, { default: e.currentTarget.value === "" ? undefined : e.currentTarget.value })}
            />
          </Group>
          <Group justify="space-between">
            <Checkbox label="Required" checked={x.required === true} onChange={(e) => setParam(i, { required: e.currentTarget.checked })} />
            <ActionIcon variant="subtle" color="red" aria-label={`Remove parameter ${x.name ?? i + 1}`} onClick={() => set({ params: params.filter((_, j) => j !== i) })}>
              <IconTrash size={16} aria-hidden />
            </ActionIcon>
          </Group>
        </Stack>
      ))}
      <Button
        variant="subtle"
        leftSection={<IconPlus size={16} aria-hidden />}
        onClick={() => set({ params: [...params, { name: `param${params.length + 1}`, type: "text" }] })}
      >
        Add parameter
      </Button>
      <Divider label="Triggers" labelPosition="left" />
      {TRIGGERS.map(([k, label, help]) => (
        <Switch key={k} label={label} description={help} checked={enabled(k)} onChange={(e) => setTrigger(k, e.currentTarget.checked)} />
      ))}
      <Text size="xs" c="dimmed">
        Trigger conditions are edited in the YAML view (triggers.&lt;kind&gt;.conditions).
      </Text>
    </Stack>
  );
}

function labelsText(l: Record<string, string> | undefined): string {
  return Object.entries(l ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
}

function parseLabels(s: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const line of s.split("\n")) {
    const [k = "", ...rest] = line.split("=");
    if (k.trim() !== "") out[k.trim()] = rest.join("=").trim();
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
