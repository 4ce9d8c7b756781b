import { describe, expect, it } from "vitest";
import { buildGraph, conditionLabel, type WorkflowTask } from "./graph";
import type { TaskRun } from "./status";

describe("conditionLabel", () => {
  it.each([
    { name: "a plain dependency", execution: "always", decision: undefined, want: undefined },
    { name: "no condition at all", execution: undefined, decision: "", want: undefined },
    { name: "on failure", execution: "failure", decision: undefined, want: "on failure" },
    { name: "a decision's patterns", execution: undefined, decision: "yes\n  \nok.*\n", want: "yes | ok.*" },
    { name: "both", execution: "success", decision: "a", want: "on success, a" },
  ])("$name", ({ execution, decision, want }) => {
    expect(conditionLabel(execution, decision)).toBe(want);
  });
});

describe("buildGraph", () => {
  const tasks = [
    { name: "start", type: "start" },
    { name: "build", type: "script", dependencies: [{ taskRef: "start" }] },
    { name: "notify", type: "script", dependencies: [{ taskRef: "build", executionCondition: "failure" }] },
    { name: "ship", type: "script", dependencies: [{ taskRef: "build", executionCondition: "success" }] },
    { name: "end", type: "end", dependencies: [{ taskRef: "ship" }, { taskRef: "notify" }] },
  ] as WorkflowTask[];
  const runs: TaskRun[] = [
    { id: "t1", name: "build", type: "script", status: "running" },
    { id: "t9", name: "extra", type: "script", status: "succeeded" },
  ];

  it("places every task left to right by rank, each matched to its task run", () => {
    const { nodes } = buildGraph(tasks, runs);
    const at = (name: string) => {
      const n = nodes.find((x) => x.name === name);
      if (!n) throw new Error(`no node ${name}`);
      return n;
    };
    expect(nodes.map((n) => n.name).sort()).toEqual(["build", "end", "extra", "notify", "ship", "start"]);
    expect(at("start").x).toBeLessThan(at("build").x);
    expect(at("build").x).toBeLessThan(at("ship").x);
    expect(at("ship").x).toBe(at("notify").x);
    expect(at("ship").y).not.toBe(at("notify").y);
    expect(at("ship").x).toBeLessThan(at("end").x);
    expect(at("build").task?.id).toBe("t1");
    expect(at("extra").task?.id).toBe("t9");
    expect(at("start").task).toBeUndefined();
  });

  it("draws each dependency once, labelled with its condition", () => {
    const { edges } = buildGraph(tasks, runs);
    expect(edges.map((e) => [e.id, e.condition, e.label])).toEqual([
      ["start->build", "always", undefined],
      ["build->notify", "failure", "on failure"],
      ["build->ship", "success", "on success"],
      ["ship->end", "always", undefined],
      ["notify->end", "always", undefined],
    ]);
  });

  it("shows the task runs alone when the version is unknown", () => {
    const { nodes, edges } = buildGraph(undefined, runs);
    expect(nodes.map((n) => n.name)).toEqual(["build", "extra"]);
    expect(edges).toEqual([]);
  });
});
