import { describe, expect, it } from "vitest";
import { byDay, formatDuration, percentile, percentiles, perWorkflow, sortRows, statusesIn, type InsightRun } from "./insights";

const run = (creationDate: string, status: InsightRun["status"], duration: number, workflow = "build"): InsightRun => ({
  id: `${workflow}-${creationDate}-${status}-${duration}`,
  creationDate,
  status,
  duration,
  workflowRef: workflow,
  workflowName: workflow,
});

describe("percentile", () => {
  it.each([
    { name: "none", give: [], p: 50, want: undefined },
    { name: "one", give: [7], p: 99, want: 7 },
    { name: "median of ten by nearest rank", give: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p: 50, want: 5 },
    { name: "p90 of ten", give: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p: 90, want: 9 },
    { name: "p99 of ten is the largest", give: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], p: 99, want: 10 },
  ])("$name", ({ give, p, want }) => {
    expect(percentile(give, p)).toBe(want);
  });
});

describe("percentiles", () => {
  it("leaves runs in flight out", () => {
    const got = percentiles([run("2026-12-01T10:00:00Z", "succeeded", 100), run("2026-12-01T11:00:00Z", "running", 9_999_999)]);
    expect(got).toEqual({ count: 1, p50: 100, p90: 100, p99: 100 });
  });
});

describe("byDay", () => {
  it("counts runs by UTC day and status, with empty days in between", () => {
    const runs = [
      run("2026-12-01T23:59:00Z", "succeeded", 1),
      run("2026-12-01T01:00:00Z", "failed", 1),
      run("2026-12-03T00:00:00Z", "succeeded", 1),
    ];
    const days = byDay(runs, Date.parse("2026-12-01T12:00:00Z"), Date.parse("2026-12-03T12:00:00Z"));
    expect(days).toEqual([
      { day: "2026-12-01", total: 2, succeeded: 1, failed: 1 },
      { day: "2026-12-02", total: 0 },
      { day: "2026-12-03", total: 1, succeeded: 1 },
    ]);
    expect(statusesIn(days)).toEqual(["succeeded", "failed"]);
  });
});

describe("perWorkflow", () => {
  const rows = perWorkflow([
    run("2026-12-01T10:00:00Z", "succeeded", 100, "build"),
    run("2026-12-02T10:00:00Z", "failed", 300, "build"),
    run("2026-12-02T11:00:00Z", "running", 0, "build"),
    run("2026-12-01T09:00:00Z", "succeeded", 50, "deploy"),
  ]);
  it("groups by workflow with its counts, rate and percentiles", () => {
    const build = rows.find((r) => r.workflow === "build");
    expect(build).toMatchObject({ runs: 3, succeeded: 1, failed: 1, successRate: 0.5, p50: 100, p99: 300, lastRun: "2026-12-02T11:00:00Z" });
  });
  it.each([
    { key: "runs" as const, desc: true, want: ["build", "deploy"] },
    { key: "runs" as const, desc: false, want: ["deploy", "build"] },
    { key: "p50" as const, desc: false, want: ["deploy", "build"] },
    { key: "workflow" as const, desc: true, want: ["deploy", "build"] },
  ])("sorts by $key (desc $desc)", ({ key, desc, want }) => {
    expect(sortRows(rows, key, desc).map((r) => r.workflow)).toEqual(want);
  });
});

describe("formatDuration", () => {
  it.each([
    { give: undefined, want: "—" },
    { give: 850, want: "850 ms" },
    { give: 12_340, want: "12.3 s" },
    { give: 245_000, want: "4 min 05 s" },
    { give: 7_380_000, want: "2 h 03 min" },
  ])("$give", ({ give, want }) => {
    expect(formatDuration(give)).toBe(want);
  });
});
