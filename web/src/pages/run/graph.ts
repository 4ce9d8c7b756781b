// The run's DAG as nodes and edges placed by a layered layout: tasks from the workflow
// version the run ran (which holds the dependencies and their conditions), each matched to
// its task run by name; a task run the version does not name (the version could not be
// read) is a node without edges.
import { Graph, layout } from "@dagrejs/dagre";
import type { Schemas } from "../../api/client";
import type { TaskRun } from "./status";

export type WorkflowTask = Schemas["WorkflowTask"];

export const NODE_WIDTH = 220;
export const NODE_HEIGHT = 76;

export interface GraphNode {
  name: string;
  type: string;
  task?: TaskRun;
  x: number;
  y: number;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** executionCondition: always, success or failure. */
  condition: string;
  /** The edge's label: its condition when not `always`, and the decision's patterns. */
  label?: string;
}

/** conditionLabel words an edge's conditions, or nothing for a plain dependency. */
export function conditionLabel(execution: string | undefined, decision: string | undefined): string | undefined {
  const parts: string[] = [];
  if (execution && execution !== "always") parts.push(`on ${execution}`);
  const patterns = (decision ?? "")
    .split("\n")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  if (patterns.length > 0) parts.push(patterns.join(" | "));
  return parts.length > 0 ? parts.join(", ") : undefined;
}

/** buildGraph places the tasks left to right, each rank a column, by dagre's layered layout. */
export function buildGraph(tasks: WorkflowTask[] | undefined, runs: TaskRun[] | undefined): { nodes: GraphNode[]; edges: GraphEdge[] } {
  const byName = new Map<string, TaskRun>();
  for (const t of runs ?? []) if (t.name) byName.set(t.name, t);
  const names: { name: string; type: string }[] = [];
  const seen = new Set<string>();
  for (const t of tasks ?? []) {
    if (seen.has(t.name)) continue;
    seen.add(t.name);
    names.push({ name: t.name, type: t.type });
  }
  for (const t of runs ?? []) {
    if (!t.name || seen.has(t.name)) continue;
    seen.add(t.name);
    names.push({ name: t.name, type: t.type ?? "" });
  }
  const edges: GraphEdge[] = [];
  for (const t of tasks ?? []) {
    for (const d of t.dependencies ?? []) {
      if (!seen.has(d.taskRef)) continue;
      edges.push({
        id: `${d.taskRef}->${t.name}`,
        source: d.taskRef,
        target: t.name,
        condition: d.executionCondition ?? "always",
        label: conditionLabel(d.executionCondition, d.decisionCondition),
      });
    }
  }

  const g = new Graph({ multigraph: false });
  g.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 72, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const n of names) g.setNode(n.name, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const e of edges) {
    // A labelled edge gets room for its label between the ranks.
    g.setEdge(e.source, e.target, e.label ? { width: Math.min(160, e.label.length * 7), height: 18, labelpos: "c" } : {});
  }
  layout(g);
  const nodes = names.map((n) => {
    const p = g.node(n.name);
    return { ...n, task: byName.get(n.name), x: p.x - NODE_WIDTH / 2, y: p.y - NODE_HEIGHT / 2 };
  });
  return { nodes, edges };
}
