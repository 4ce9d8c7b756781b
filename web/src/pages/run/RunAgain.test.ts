import { describe, expect, it } from "vitest";
import { initialValue, submitValues, type Param } from "./RunAgain";
import type { Run } from "./status";

const run: Run = {
  params: [
    { name: "region", value: "eu" },
    { name: "replicas", value: 3 },
    { name: "dry", value: "true" },
    { name: "token", value: "********" },
    { name: "config", value: { a: 1 } },
    { name: "zones", value: ["a", "b"] },
  ],
};

describe("initialValue", () => {
  it.each<{ name: string; give: Param; want: unknown }>([
    { name: "the run's text", give: { name: "region", type: "text", default: "us" }, want: "eu" },
    { name: "the default when the run has none", give: { name: "owner", type: "text", default: "ops" }, want: "ops" },
    { name: "v4's key and defaultValue", give: { key: "owner", type: "text", defaultValue: "ops" }, want: "ops" },
    { name: "a number", give: { name: "replicas", type: "number" }, want: 3 },
    { name: "a boolean sent as text", give: { name: "dry", type: "boolean" }, want: true },
    { name: "a password is never filled in", give: { name: "token", type: "password" }, want: "" },
    { name: "a masked value of another type neither", give: { name: "token", type: "text" }, want: "" },
    { name: "JSON as text", give: { name: "config", type: "json" }, want: '{\n  "a": 1\n}' },
    { name: "a multiselect", give: { name: "zones", type: "multiselect" }, want: ["a", "b"] },
  ])("$name", ({ give, want }) => {
    expect(initialValue(give, run)).toEqual(want);
  });
});

describe("submitValues", () => {
  const params: Param[] = [
    { name: "region", type: "text" },
    { name: "token", type: "password" },
    { name: "config", type: "json" },
    { name: "zones", type: "multiselect" },
    { name: "dry", type: "boolean" },
  ];
  it("sends what is filled in, JSON parsed, and leaves out what is empty", () => {
    expect(submitValues(params, { region: "us", token: "", config: '{"a": 2}', zones: [], dry: false })).toEqual({
      region: "us",
      config: { a: 2 },
      zones: [],
      dry: false,
    });
  });
  it("names a JSON field that does not parse", () => {
    expect(() => submitValues([{ name: "config", label: "Config", type: "json" }], { config: "{" })).toThrow("Config: not valid JSON");
  });
});
