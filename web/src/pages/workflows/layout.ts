// Where each task sits on the canvas: its stored position, else one from a layered layout
// (dagre, top to bottom) of the whole graph, so a workflow written by hand or by the API
// without positions still reads from start to end.
import dagre from "@dagrejs/dagre";
import { positionOf, tasksOf, type Position, type Workflow } from "./model";

export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 56;

/** autoLayout answers a position for every task, by a layered layout of the dependencies. */
export function autoLayout(w: Workflow): Map<string, Position> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: "TB", nodesep: 40, ranksep: 70, marginx: 0, marginy: 0 });
  g.setDefaultEdgeLabel(() => ({}));
  const tasks = tasksOf(w);
  const names = new Set(tasks.map((t) => t.name));
  for (const t of tasks) g.setNode(t.name, { width: NODE_WIDTH, height: NODE_HEIGHT });
  for (const t of tasks) {
    for (const d of t.dependencies ?? []) if (names.has(d.taskRef) && d.taskRef !== t.name) g.setEdge(d.taskRef, t.name);
  }
  dagre.layout(g);
  const out = new Map<string, Position>();
  for (const t of tasks) {
    const n = g.node(t.name);
    // dagre answers centres; the canvas places nodes by their top left corner.
    out.set(t.name, { x: Math.round(n.x - NODE_WIDTH / 2), y: Math.round(n.y - NODE_HEIGHT / 2) });
  }
  return out;
}

/** shapeOf names a graph's tasks and edges: two documents of one shape lay out alike. */
export function shapeOf(w: Workflow): string {
  return tasksOf(w)
    .map((t) => `${t.name}<${(t.dependencies ?? []).map((d) => d.taskRef).join(",")}`)
    .join(";");
}

/**
 * positions answers where each task is drawn: its stored position, else the layout's. The
 * layout is only computed when some task has no position; cache keeps the last one by the
 * graph's shape, so moving a node does not lay the graph out again.
 */
export function positions(w: Workflow, cache?: { shape?: string; laid?: Map<string, Position> }): Map<string, Position> {
  const tasks = tasksOf(w);
  const stored = new Map<string, Position>();
  for (const t of tasks) {
    const p = positionOf(t);
    if (p) stored.set(t.name, p);
  }
  if (stored.size === tasks.length) return stored;
  let laid: Map<string, Position>;
  const shape = cache ? shapeOf(w) : "";
  if (cache?.laid && cache.shape === shape) laid = cache.laid;
  else {
    laid = autoLayout(w);
    if (cache) {
      cache.shape = shape;
      cache.laid = laid;
    }
  }
  const out = new Map(laid);
  for (const [k, v] of stored) out.set(k, v);
  return out;
}
