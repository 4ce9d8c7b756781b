import { describe, expect, it } from "vitest";
import { edgesFor, nodesFor, type TaskNode } from "./canvas";
import { positions } from "./layout";
import { blank, moveTasks, setCondition, type Problems, type Workflow } from "./model";

const none: Problems = { tasks: new Map(), edges: new Map(), other: [] };
const open = () => undefined;

/** big is start, 198 scripts in 18 layers of 11 (each on one of the layer above), end: no positions stored. */
function big(): Workflow {
  const w = blank("big");
  const tasks: NonNullable<Workflow["tasks"]> = [{ name: "start", type: "start" }];
  for (let l = 0; l < 18; l++) {
    for (let i = 0; i < 11; i++) {
      tasks.push({ name: `t-${l}-${i}`, type: "script", dependencies: [{ taskRef: l === 0 ? "start" : `t-${l - 1}-${i}` }] });
    }
  }
  tasks.push({ name: "end", type: "end", dependencies: Array.from({ length: 11 }, (_, i) => ({ taskRef: `t-17-${i}` })) });
  return { ...w, tasks };
}

/** drawn is the canvas's nodes of w as after a first draw, measured. */
function drawn(w: Workflow): TaskNode[] {
  return nodesFor(w, positions(w), none, undefined, []).map((n) => ({ ...n, measured: { width: 200, height: 56 } }));
}

describe("the canvas's nodes and edges", () => {
  it("after the first drag among 200 laid-out tasks, redraws only the dragged node", () => {
    const w = big();
    const nodes = drawn(w);
    const edges = edgesFor(w, none, undefined, open, []);
    expect(nodes).toHaveLength(200);
    expect(edges).toHaveLength(209);

    // What the canvas holds after the drag: the dragged node at its new place.
    const after = nodes.map((n) => (n.id === "t-9-5" ? { ...n, position: { x: n.position.x + 90.4, y: n.position.y + 60 } } : n));
    // What the document gets: every laid-out position stored, the dragged one rounded.
    const moves = new Map(after.map((n) => [n.id, n.position]));
    const moved = moveTasks(w, moves);
    expect(moved.tasks?.every((t, i) => t !== w.tasks?.[i])).toBe(true);

    const next = nodesFor(moved, positions(moved), none, undefined, after);
    const redrawn = next.filter((n, i) => n !== after[i]).map((n) => n.id);
    // Rounded from 90.4: the one node whose position changed in the canvas's terms.
    expect(redrawn).toEqual(["t-9-5"]);
    expect(next.find((n) => n.id === "t-9-5")?.measured).toEqual({ width: 200, height: 56 });
    expect(edgesFor(moved, none, undefined, open, edges)).toBe(edges);
  });

  it("answers the same nodes when nothing they draw changed", () => {
    const w = big();
    const nodes = drawn(w);
    expect(nodesFor(w, positions(w), none, undefined, nodes)).toBe(nodes);
  });

  it("redraws the nodes and edges whose selection, problems or condition changed", () => {
    const w = big();
    const nodes = drawn(w);
    const edges = edgesFor(w, none, undefined, open, []);
    const problems: Problems = { tasks: new Map([["t-3-3", ["script is required"]]]), edges: new Map(), other: [] };

    const next = nodesFor(w, positions(w), problems, "t-0-0", nodes);
    expect(next.filter((n, i) => n !== nodes[i]).map((n) => n.id)).toEqual(["t-0-0", "t-3-3"]);
    expect(next.find((n) => n.id === "t-0-0")?.selected).toBe(true);
    expect(next.find((n) => n.id === "t-3-3")?.data.problems).toEqual(["script is required"]);

    const conditioned = setCondition(w, "t-4-2", "t-5-2", "failure", "");
    const nextEdges = edgesFor(conditioned, none, "start->t-0-1", open, edges);
    expect(nextEdges.filter((e, i) => e !== edges[i]).map((e) => e.id)).toEqual(["start->t-0-1", "t-4-2->t-5-2"]);
    expect(nextEdges.find((e) => e.id === "t-4-2->t-5-2")?.data?.label).toBe("failure");
  });

  it("drops the nodes and edges of removed tasks", () => {
    const w = big();
    const nodes = drawn(w);
    const fewer = { ...w, tasks: w.tasks?.filter((t) => t.name !== "t-17-0") };
    const next = nodesFor(fewer, positions(fewer), none, undefined, nodes);
    expect(next).toHaveLength(199);
    expect(next.some((n) => n.id === "t-17-0")).toBe(false);
    expect(edgesFor(fewer, none, undefined, open, []).some((e) => e.source === "t-17-0" || e.target === "t-17-0")).toBe(false);
  });
});
