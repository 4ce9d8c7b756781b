import { describe, expect, it } from "vitest";
import { formatDuration, parseRunFilters, runFiltersToSearch, runQuery } from "./filters";

describe("run filters in the URL", () => {
  it.each([
    { name: "nothing is the default list", give: "", want: "" },
    { name: "filters kept in order", give: "statuses=failed,running&workflows=build&triggers=manual&labels=env%3Dprod", want: "statuses=failed%2Crunning&workflows=build&triggers=manual&labels=env%3Dprod" },
    { name: "dates and paging", give: "from=2026-12-01&to=2026-12-07&page=3&size=50&order=asc", want: "from=2026-12-01&to=2026-12-07&order=asc&size=50&page=3" },
    { name: "what does not parse takes its default", give: "page=0&size=7&from=yesterday&order=sideways", want: "" },
    { name: "empty items dropped", give: "statuses=,failed,,", want: "statuses=failed" },
  ])("$name", ({ give, want }) => {
    expect(runFiltersToSearch(parseRunFilters(new URLSearchParams(give))).toString()).toBe(want);
  });
});

describe("runQuery", () => {
  it("asks for the page, newest first, without empty filters", () => {
    expect(runQuery(parseRunFilters(new URLSearchParams("page=2")))).toEqual({ page: 1, limit: 25, order: "DESC" });
  });
  it("passes lists and makes days whole local days", () => {
    const q = runQuery(parseRunFilters(new URLSearchParams("statuses=failed&labels=env%3Dprod&from=2026-12-01&to=2026-12-01")));
    expect(q.statuses).toEqual(["failed"]);
    expect(q.labels).toEqual(["env=prod"]);
    expect(q.fromDate).toBe(new Date(2026, 11, 1).getTime());
    expect((q.toDate ?? 0) - (q.fromDate ?? 0)).toBe(24 * 3600 * 1000 - 1);
  });
});

describe("formatDuration", () => {
  it.each([
    { give: undefined, want: "" },
    { give: -1, want: "" },
    { give: 850, want: "850 ms" },
    { give: 1234, want: "1.2 s" },
    { give: 42_000, want: "42 s" },
    { give: 245_000, want: "4 min 5 s" },
    { give: 7_380_000, want: "2 h 3 min" },
  ])("$give ms → $want", ({ give, want }) => {
    expect(formatDuration(give)).toBe(want);
  });
});
