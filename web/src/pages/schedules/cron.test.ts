import { describe, expect, it } from "vitest";
import { presetOf, splitCron, withField } from "./cron";
import { dayIn, instantOf, monthGrid, parseLocal, toLocalInput, wallOf } from "./zone";

describe("cron builder", () => {
  it.each([
    { give: "0 9 * * MON-FRI", want: ["0", "9", "*", "*", "MON-FRI"] },
    { give: "  0   9 * *  1 ", want: ["0", "9", "*", "*", "1"] },
    { give: "0 0 9 * * *", want: null },
    { give: "@daily", want: null },
    { give: "@every 1h", want: null },
    { give: "", want: null },
  ])("splitCron($give)", ({ give, want }) => {
    expect(splitCron(give)).toEqual(want);
  });

  it.each([
    { give: "0 9 * * *", field: 4, value: "MON", want: "0 9 * * MON" },
    { give: "0 9 * * *", field: 1, value: "", want: "0 * * * *" },
    { give: "@daily", field: 0, value: "30", want: "30 * * * *" },
    { give: "0 9 * * *", field: 1, value: " 8, 17 ", want: "0 8,17 * * *" },
  ])("withField($give, $field, $value)", ({ give, field, value, want }) => {
    expect(withField(give, field, value)).toBe(want);
  });

  it("names presets", () => {
    expect(presetOf(" 0  9 * * MON-FRI")).toBe("0 9 * * MON-FRI");
    expect(presetOf("1 9 * * MON-FRI")).toBeNull();
  });
});

describe("zone", () => {
  it.each([
    { name: "winter in Berlin", y: 2026, m: 1, d: 15, h: 9, zone: "Europe/Berlin", want: "2026-01-15T08:00:00.000Z" },
    { name: "summer in Berlin", y: 2026, m: 7, d: 15, h: 9, zone: "Europe/Berlin", want: "2026-07-15T07:00:00.000Z" },
    { name: "New York", y: 2026, m: 12, d: 7, h: 0, zone: "America/New_York", want: "2026-12-07T05:00:00.000Z" },
    { name: "UTC", y: 2026, m: 3, d: 1, h: 12, zone: "UTC", want: "2026-03-01T12:00:00.000Z" },
    { name: "a skipped hour reads after the gap", y: 2026, m: 3, d: 29, h: 2, zone: "Europe/Berlin", want: "2026-03-29T01:00:00.000Z" },
    { name: "a repeated hour reads the first", y: 2026, m: 10, d: 25, h: 2, zone: "Europe/Berlin", want: "2026-10-25T00:00:00.000Z" },
  ])("instantOf: $name", ({ y, m, d, h, zone, want }) => {
    expect(new Date(instantOf(y, m, d, h, 0, zone)).toISOString()).toBe(want);
  });

  it("reads and writes a datetime-local value in a zone", () => {
    const ms = parseLocal("2026-12-06T23:30", "Asia/Tokyo");
    expect(ms).not.toBeNull();
    expect(new Date(ms!).toISOString()).toBe("2026-12-06T14:30:00.000Z");
    expect(toLocalInput(ms!, "Asia/Tokyo")).toBe("2026-12-06T23:30");
    expect(dayIn(ms!, "America/Los_Angeles")).toBe("2026-12-06");
    expect(wallOf(ms!, "UTC").weekday).toBe(0);
    expect(parseLocal("yesterday", "UTC")).toBeNull();
  });

  it("lays a month out in weeks from Monday", () => {
    const weeks = monthGrid(2026, 12); // 1 December 2026 is a Tuesday
    expect(weeks[0]).toEqual([null, "2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04", "2026-12-05", "2026-12-06"]);
    expect(weeks.flat().filter(Boolean)).toHaveLength(31);
    expect(weeks.every((w) => w.length === 7)).toBe(true);
  });
});
