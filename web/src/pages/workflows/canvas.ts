// The canvas's nodes and edges, built from the document. A change of the document gives new
// task objects (a move stores a position in every task laid out by the automatic layout),
// but the canvas redraws a node or an edge only when the object it is handed is new: these
// keep the previous object of every node and edge whose drawing is the same, so that the end
// of a drag among 200 tasks redraws the dragged node, not the whole graph.
import type { Edge, Node } from "@xyflow/react";
import { edgeId, tasksOf, type Position, type Problems, type Workflow } from "./model";

/** TaskData is what a node draws of its task. */
export interface TaskData extends Record<string, unknown> {
  name: string;
  type: string;
  taskRef?: string;
  problems?: string[];
}
export type TaskNode = Node<TaskData, "task">;

export interface CondData extends Record<string, unknown> {
  label?: string;
  problems?: string[];
  onOpen: (id: string) => void;
}
export type CondEdge = Edge<CondData, "condition">;

function conditionLabel(d: { executionCondition?: string; decisionCondition?: string }): string | undefined {
  const parts: string[] = [];
  if (d.executionCondition && d.executionCondition !== "always") parts.push(d.executionCondition);
  if (d.decisionCondition) parts.push(d.decisionCondition.split("\n").join(" | "));
  return parts.length > 0 ? parts.join(" · ") : undefined;
}

/** same answers previous when next holds the same objects in the same order. */
function same<T>(previous: T[], next: T[]): T[] {
  return previous.length === next.length && next.every((x, i) => x === previous[i]) ? previous : next;
}

/**
 * nodesFor answers the canvas's nodes for a document: one a task, at its position, reusing
 * the node of current that draws the same (answering current itself when nothing changed).
 * A node keeps the canvas's measurement of its size: without it the canvas hides the node
 * until it measures it again.
 */
export function nodesFor(
  w: Workflow,
  at: Map<string, Position>,
  problems: Problems,
  selectedTask: string | undefined,
  current: TaskNode[],
): TaskNode[] {
  const byId = new Map(current.map((n) => [n.id, n]));
  const next = tasksOf(w).map((t): TaskNode => {
    const pos = at.get(t.name) ?? { x: 0, y: 0 };
    const probs = problems.tasks.get(t.name);
    const selected = t.name === selectedTask;
    const old = byId.get(t.name);
    if (
      old &&
      old.data.type === t.type &&
      old.data.taskRef === t.taskRef &&
      old.data.problems === probs &&
      old.selected === selected &&
      old.position.x === pos.x &&
      old.position.y === pos.y
    )
      return old;
    return {
      id: t.name,
      type: "task",
      position: pos,
      data: { name: t.name, type: t.type, taskRef: t.taskRef, problems: probs },
      selected,
      measured: old?.measured,
    };
  });
  return same(current, next);
}

/**
 * edgesFor answers the canvas's edges for a document: one a dependency on a task of the
 * document, reusing the edge of previous that draws the same.
 */
export function edgesFor(
  w: Workflow,
  problems: Problems,
  selectedEdge: string | undefined,
  onOpen: (id: string) => void,
  previous: CondEdge[],
): CondEdge[] {
  const tasks = tasksOf(w);
  const names = new Set(tasks.map((t) => t.name));
  const byId = new Map(previous.map((e) => [e.id, e]));
  const next: CondEdge[] = [];
  for (const t of tasks) {
    for (const d of t.dependencies ?? []) {
      if (!names.has(d.taskRef)) continue;
      const id = edgeId(d.taskRef, t.name);
      const label = conditionLabel(d);
      const probs = problems.edges.get(id);
      const selected = id === selectedEdge;
      const old = byId.get(id);
      if (old?.data && old.data.label === label && old.data.problems === probs && old.data.onOpen === onOpen && old.selected === selected) {
        next.push(old);
        continue;
      }
      next.push({
        id,
        source: d.taskRef,
        target: t.name,
        type: "condition",
        selected,
        data: { label, problems: probs, onOpen },
      });
    }
  }
  return same(previous, next);
}
