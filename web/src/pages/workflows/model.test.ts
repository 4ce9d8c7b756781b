import { describe, expect, it } from "vitest";
import { positions } from "./layout";
import {
  POSITION,
  addTask,
  blank,
  clean,
  connect,
  moveTasks,
  problemsOf,
  removeTasks,
  renameTask,
  setCondition,
  setParam,
  type Workflow,
} from "./model";
import { fromYaml, toYaml } from "./yaml";

const shell = { name: "execute-shell", type: "script", scope: "global" };

function built(): Workflow {
  let w = blank("release");
  [w] = addTask(w, shell, { x: 10, y: 100 });
  w = connect(w, "start", "execute-shell");
  w = connect(w, "execute-shell", "end");
  return w;
}

describe("the designer's document", () => {
  it("adds catalogue tasks under unique names, team tasks by <team>/<name>", () => {
    const [w1, a] = addTask(blank("x"), shell, { x: 1.4, y: 2.6 });
    const [w2, b] = addTask(w1, shell, { x: 0, y: 0 });
    const [w3, c] = addTask(w2, { name: "deploy", type: "template", scope: "team", team: "infra" }, { x: 0, y: 0 });
    expect([a, b, c]).toEqual(["execute-shell", "execute-shell-2", "deploy"]);
    expect(w3.tasks?.find((t) => t.name === "deploy")?.taskRef).toBe("infra/deploy");
    expect(w1.tasks?.find((t) => t.name === "execute-shell")?.annotations?.[POSITION]).toEqual({ x: 1, y: 3 });
  });

  it("connects once, never a task to itself, and removes a task with its edges", () => {
    const w = built();
    expect(connect(w, "start", "execute-shell")).toBe(w);
    expect(connect(w, "end", "end")).toBe(w);
    const gone = removeTasks(w, ["execute-shell"]);
    expect(gone.tasks?.map((t) => t.name)).toEqual(["start", "end"]);
    expect(gone.tasks?.find((t) => t.name === "end")?.dependencies).toEqual([{ taskRef: "start" }]);
  });

  it("writes conditions as the API reads them, leaving out the defaults", () => {
    let w = setCondition(built(), "execute-shell", "end", "failure", "");
    expect(w.tasks?.find((t) => t.name === "end")?.dependencies?.[1]).toEqual({ taskRef: "execute-shell", executionCondition: "failure" });
    w = setCondition(w, "execute-shell", "end", "always", "yes\nmaybe");
    expect(w.tasks?.find((t) => t.name === "end")?.dependencies?.[1]).toEqual({ taskRef: "execute-shell", decisionCondition: "yes\nmaybe" });
  });

  it("renames a task and the edges naming it, refusing a taken name", () => {
    const w = built();
    expect(renameTask(w, "execute-shell", "start")).toBeUndefined();
    expect(renameTask(w, "execute-shell", " ")).toBeUndefined();
    const r = renameTask(w, "execute-shell", "build");
    expect(r?.tasks?.find((t) => t.name === "end")?.dependencies?.map((d) => d.taskRef)).toEqual(["start", "build"]);
  });

  it("sets and clears params", () => {
    let w = setParam(built(), "execute-shell", "script", "echo hi");
    expect(w.tasks?.find((t) => t.name === "execute-shell")?.params).toEqual([{ name: "script", value: "echo hi" }]);
    w = setParam(w, "execute-shell", "script", "");
    expect(w.tasks?.find((t) => t.name === "execute-shell")?.params).toEqual([]);
  });

  it("places the API's field errors on the tasks and edges of the document sent", () => {
    const w = built();
    const p = problemsOf(w, [
      { field: "tasks[2].params", message: "a script task needs a value for 'script'" },
      { field: "tasks[1].dependencies[1].decisionCondition", message: "bad pattern" },
      { field: "tasks", message: "a workflow needs exactly one task of type 'end', found 0" },
      { field: "tasks[9].name", message: "out of range" },
    ]);
    expect(p.tasks.get("execute-shell")).toEqual(["params: a script task needs a value for 'script'"]);
    expect(p.edges.get("execute-shell->end")).toEqual(["decisionCondition: bad pattern"]);
    expect(p.other).toEqual(["tasks: a workflow needs exactly one task of type 'end', found 0", "tasks[9].name: out of range"]);
  });

  it("drops what the server owns and v4's aliases, which would disagree after an edit", () => {
    const w = clean({
      name: "x",
      id: "wf_1",
      team: "t",
      version: 3,
      creationDate: "2026-01-01T00:00:00.000Z",
      changelog: { reason: "r" },
      params: [{ key: "env", name: "env", default: "a", defaultValue: "a" }],
      triggers: { codehost: { enabled: true }, github: { enabled: true } },
    } as Workflow);
    expect(w).toEqual({ name: "x", params: [{ name: "env", default: "a" }], triggers: { codehost: { enabled: true } } });
  });
});

describe("positions", () => {
  it("keeps stored positions and lays out the rest from start to end", () => {
    const w = built();
    const unplaced: Workflow = { ...w, tasks: w.tasks?.map((t) => ({ ...t, annotations: undefined })) };
    const p = positions(unplaced);
    expect(p.get("start")!.y).toBeLessThan(p.get("execute-shell")!.y);
    expect(p.get("execute-shell")!.y).toBeLessThan(p.get("end")!.y);
    const moved = moveTasks(unplaced, new Map([["end", { x: 500, y: 600 }]]));
    expect(positions(moved).get("end")).toEqual({ x: 500, y: 600 });
  });
});

describe("YAML", () => {
  it("round-trips the document, unknown fields included", () => {
    const w = { ...setCondition(built(), "execute-shell", "end", "success", ""), custom: { a: [1, 2] } };
    const r = fromYaml(toYaml(w));
    expect(r).toEqual({ ok: true, workflow: w });
  });

  it("reads JSON and kind: Workflow, and refuses what is not a workflow", () => {
    expect(fromYaml('{"name": "a", "tasks": []}')).toEqual({ ok: true, workflow: { name: "a", tasks: [] } });
    expect(fromYaml("kind: Workflow\nname: a\n")).toEqual({ ok: true, workflow: { name: "a" } });
    expect(fromYaml("kind: Task\nname: a\n")).toMatchObject({ ok: false });
    expect(fromYaml("tasks: []\n")).toMatchObject({ ok: false, error: "The workflow needs a name." });
    expect(fromYaml("name: a\ntasks: [\n")).toMatchObject({ ok: false });
    expect(fromYaml("name: a\ntasks:\n  - type: end\n")).toMatchObject({ ok: false, error: "tasks[0] needs a name." });
  });
});
