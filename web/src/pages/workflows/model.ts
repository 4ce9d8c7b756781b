// The designer's model: a workflow document (the API's Workflow, as `baton apply -f` takes
// it) and the pure functions that edit it. The graph, the YAML view and the forms all read
// and write this one document, so they cannot disagree.
import type { Schemas } from "../../api";
import type { ParamDefinition } from "../../components/ParamForm";

// The document's types, written out rather than taken from the generated ones: the
// generated types make defaulted fields mandatory (`executionCondition`, a param's
// `required`) and an `anyOf` param `unknown`, and their index signatures defeat Omit.
// Unknown fields are kept, as the API keeps them.

export interface Dependency {
  taskRef: string;
  executionCondition?: Condition;
  decisionCondition?: string;
  [extra: string]: unknown;
}

export interface WorkflowTask {
  name: string;
  type: string;
  taskRef?: string;
  taskVersion?: number;
  timeout?: number;
  retries?: number;
  retryDelay?: number;
  join?: "all" | "any";
  dependencies?: Dependency[];
  params?: { name: string; value?: unknown }[];
  results?: unknown[];
  labels?: Record<string, string>;
  annotations?: Record<string, unknown>;
  [extra: string]: unknown;
}

export type Param = ParamDefinition;

export interface Trigger {
  enabled?: boolean;
  conditions?: unknown[];
  [extra: string]: unknown;
}

export interface Workflow {
  name: string;
  displayName?: string;
  status?: "active" | "inactive";
  version?: number;
  description?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, unknown>;
  timeout?: number;
  retries?: number;
  params?: Param[];
  triggers?: Record<string, Trigger | undefined>;
  tasks?: WorkflowTask[];
  changelog?: { author?: string; reason?: string; date?: string };
  [extra: string]: unknown;
}

/** CatalogueTask is what the designer reads of a task of the catalogue. */
export interface CatalogueTask {
  name: string;
  displayName?: string;
  description?: string;
  type?: string;
  category?: string;
  scope?: string;
  team?: string;
  status?: string;
  version?: number;
  spec?: { params?: ParamDefinition[]; [extra: string]: unknown };
  [extra: string]: unknown;
}

/** asApi hands a document to the typed client, whose generated type is stricter than the API. */
export const asApi = (w: Workflow) => w as unknown as Schemas["Workflow"];
/** fromApi reads a workflow the API answered as the document's type. */
export const fromApi = (w: Schemas["Workflow"]) => w as unknown as Workflow;

export type Condition = "always" | "success" | "failure";

/** POSITION is the annotation where a task keeps its place on the canvas. */
export const POSITION = "baton.io/position";

export interface Position {
  x: number;
  y: number;
}

/** Fields the server owns: never shown in the YAML nor sent back. */
const READ_ONLY = ["id", "team", "version", "creationDate", "changelog"] as const;

/**
 * clean makes a workflow as read from the API into the document the designer edits: without
 * the server's read-only fields and without the v4 aliases the API answers beside Baton's
 * names (`key`, `defaultValue`, triggers' `github`), which would otherwise disagree with an
 * edited value on save.
 */
export function clean(w: Workflow | Schemas["Workflow"]): Workflow {
  const out: Record<string, unknown> = { ...w };
  for (const k of READ_ONLY) delete out[k];
  if (Array.isArray(out.params)) out.params = (out.params as Param[]).map(cleanParam);
  const triggers = out.triggers as Record<string, unknown> | undefined;
  if (triggers && "github" in triggers) {
    const t = { ...triggers };
    if (!("codehost" in t)) t.codehost = t.github;
    delete t.github;
    out.triggers = t;
  }
  return out as Workflow;
}

function cleanParam(p: Param): Param {
  const q: Record<string, unknown> = { ...p };
  if (q.name === undefined && typeof q.key === "string") q.name = q.key;
  if (q.default === undefined && q.defaultValue !== undefined) q.default = q.defaultValue;
  delete q.key;
  delete q.defaultValue;
  return q as Param;
}

/** blank is a new workflow: a start and an end, connected. */
export function blank(name: string): Workflow {
  return {
    name,
    tasks: [
      { name: "start", type: "start", annotations: { [POSITION]: { x: 0, y: 0 } } },
      { name: "end", type: "end", dependencies: [{ taskRef: "start" }], annotations: { [POSITION]: { x: 0, y: 200 } } },
    ],
  };
}

export function tasksOf(w: Workflow): WorkflowTask[] {
  return w.tasks ?? [];
}

export function positionOf(t: WorkflowTask): Position | undefined {
  const p = t.annotations?.[POSITION] as Partial<Position> | undefined;
  if (p && typeof p.x === "number" && typeof p.y === "number") return { x: p.x, y: p.y };
  return undefined;
}

function withTasks(w: Workflow, tasks: WorkflowTask[]): Workflow {
  return { ...w, tasks };
}

function mapTask(w: Workflow, name: string, f: (t: WorkflowTask) => WorkflowTask): Workflow {
  return withTasks(
    w,
    tasksOf(w).map((t) => (t.name === name ? f(t) : t)),
  );
}

/** uniqueName is base, or base-2, base-3, … : the first no task of w is called. */
export function uniqueName(w: Workflow, base: string): string {
  const taken = new Set(tasksOf(w).map((t) => t.name));
  const slug = base.replace(/[^A-Za-z0-9-]+/g, "-").replace(/^-+|-+$/g, "") || "task";
  if (!taken.has(slug)) return slug;
  for (let i = 2; ; i++) {
    if (!taken.has(`${slug}-${i}`)) return `${slug}-${i}`;
  }
}

/**
 * addTask adds a task running the catalogue task t (a team task is referred to as
 * `<team>/<name>`) at position p, and answers the document and the new task's name.
 */
export function addTask(w: Workflow, t: CatalogueTask, p: Position): [Workflow, string] {
  const name = uniqueName(w, t.name);
  const ref = t.scope === "team" && t.team ? `${t.team}/${t.name}` : t.name;
  const task: WorkflowTask = {
    name,
    type: t.type ?? "template",
    taskRef: ref,
    annotations: { [POSITION]: { x: Math.round(p.x), y: Math.round(p.y) } },
  };
  return [withTasks(w, [...tasksOf(w), task]), name];
}

/** removeTasks removes the named tasks and every edge to or from them. */
export function removeTasks(w: Workflow, names: string[]): Workflow {
  const gone = new Set(names);
  return withTasks(
    w,
    tasksOf(w)
      .filter((t) => !gone.has(t.name))
      .map((t) =>
        t.dependencies?.some((d) => gone.has(d.taskRef))
          ? { ...t, dependencies: t.dependencies.filter((d) => !gone.has(d.taskRef)) }
          : t,
      ),
  );
}

/**
 * moveTasks stores the positions given, rounded, in the tasks' annotations; a task already
 * at its position stays the same object.
 */
export function moveTasks(w: Workflow, moves: Map<string, Position>): Workflow {
  return withTasks(
    w,
    tasksOf(w).map((t) => {
      const p = moves.get(t.name);
      if (!p) return t;
      const at = { x: Math.round(p.x), y: Math.round(p.y) };
      const was = positionOf(t);
      if (was && was.x === at.x && was.y === at.y) return t;
      return { ...t, annotations: { ...t.annotations, [POSITION]: at } };
    }),
  );
}

/** renameTask renames a task and every dependency naming it; a taken or empty name is refused. */
export function renameTask(w: Workflow, from: string, to: string): Workflow | undefined {
  if (to === from) return w;
  if (to.trim() === "" || tasksOf(w).some((t) => t.name === to)) return undefined;
  return withTasks(
    w,
    tasksOf(w).map((t) => {
      const renamed = t.name === from ? { ...t, name: to } : t;
      if (!renamed.dependencies?.some((d) => d.taskRef === from)) return renamed;
      return { ...renamed, dependencies: renamed.dependencies.map((d) => (d.taskRef === from ? { ...d, taskRef: to } : d)) };
    }),
  );
}

/** connect makes target depend on source; a loop on one task or an edge already there changes nothing. */
export function connect(w: Workflow, source: string, target: string): Workflow {
  if (source === target) return w;
  const t = tasksOf(w).find((x) => x.name === target);
  if (!t || t.dependencies?.some((d) => d.taskRef === source)) return w;
  return mapTask(w, target, (x) => ({ ...x, dependencies: [...(x.dependencies ?? []), { taskRef: source }] }));
}

/** disconnect removes the edge from source to target. */
export function disconnect(w: Workflow, source: string, target: string): Workflow {
  return mapTask(w, target, (x) => ({ ...x, dependencies: (x.dependencies ?? []).filter((d) => d.taskRef !== source) }));
}

export function dependencyOf(w: Workflow, source: string, target: string): Dependency | undefined {
  return tasksOf(w)
    .find((t) => t.name === target)
    ?.dependencies?.find((d) => d.taskRef === source);
}

/**
 * setCondition sets an edge's execution condition and, after a decision task, its decision
 * condition (newline-separated patterns; empty is the default branch). `always`, the
 * default, and an empty decision condition are left out of the document.
 */
export function setCondition(w: Workflow, source: string, target: string, execution: Condition, decision: string): Workflow {
  return mapTask(w, target, (x) => ({
    ...x,
    dependencies: (x.dependencies ?? []).map((d) => {
      if (d.taskRef !== source) return d;
      const n: Dependency = { ...d };
      if (execution === "always") delete n.executionCondition;
      else n.executionCondition = execution;
      if (decision.trim() === "") delete n.decisionCondition;
      else n.decisionCondition = decision;
      return n;
    }),
  }));
}

/** paramValues is the task's params as a map of name to value. */
export function paramValues(t: WorkflowTask): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of t.params ?? []) out[p.name] = p.value;
  return out;
}

/** setParam gives the task's param a value; undefined or "" removes it. */
export function setParam(w: Workflow, task: string, name: string, value: unknown): Workflow {
  return mapTask(w, task, (t) => {
    const params = (t.params ?? []).filter((p) => p.name !== name);
    const i = (t.params ?? []).findIndex((p) => p.name === name);
    if (value === undefined || value === "") return { ...t, params };
    const next = [...(t.params ?? [])];
    if (i >= 0) next[i] = { ...next[i], name, value };
    else next.push({ name, value });
    return { ...t, params: next };
  });
}

/** updateTask replaces fields of one task (not its name: renameTask does that). */
export function updateTask(w: Workflow, task: string, patch: Partial<WorkflowTask>): Workflow {
  return mapTask(w, task, (t) => {
    const n: Record<string, unknown> = { ...t, ...patch, name: t.name };
    for (const [k, v] of Object.entries(patch)) if (v === undefined) delete n[k];
    return n as WorkflowTask;
  });
}

export interface Problems {
  /** By task name: the messages of the fields under tasks[i]. */
  tasks: Map<string, string[]>;
  /** By edge id (source->target): the messages of its dependency's fields. */
  edges: Map<string, string[]>;
  /** Everything else: `field: message`. */
  other: string[];
}

export const edgeId = (source: string, target: string) => `${source}->${target}`;

const TASK_FIELD = /^tasks\[(\d+)\](?:\.dependencies\[(\d+)\])?(?:\.(.*))?$/;

/**
 * problemsOf places the API's field errors (paths such as `tasks[2].dependencies[0].taskRef`)
 * on the tasks and edges of the document that was sent.
 */
export function problemsOf(w: Workflow, errors: { field: string; message: string }[]): Problems {
  const out: Problems = { tasks: new Map(), edges: new Map(), other: [] };
  const tasks = tasksOf(w);
  const push = (m: Map<string, string[]>, k: string, msg: string) => m.set(k, [...(m.get(k) ?? []), msg]);
  for (const e of errors) {
    const m = TASK_FIELD.exec(e.field);
    const t = m ? tasks[Number(m[1])] : undefined;
    if (!m || !t) {
      out.other.push(`${e.field}: ${e.message}`);
      continue;
    }
    const field = m[3] ? `${m[3]}: ` : "";
    if (m[2] !== undefined) {
      const d = t.dependencies?.[Number(m[2])];
      if (d) {
        push(out.edges, edgeId(d.taskRef, t.name), `${field}${e.message}`);
        continue;
      }
    }
    push(out.tasks, t.name, `${field}${e.message}`);
  }
  return out;
}
