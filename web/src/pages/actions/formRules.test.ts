import { describe, expect, it } from "vitest";
import { checkForm, fieldErrorsOf, initialValue, type FormValue, type Param } from "./formRules";

// The cases of the API's own check (services/runs, domain.CheckForm), field by field.
describe("checkForm", () => {
  const form: Param[] = [
    { name: "version", type: "text", required: true, maxValueLength: 5, minValueLength: 2 },
    { name: "env", type: "select", options: [{ key: "staging", value: "Staging" }, { key: "prod", value: "Production" }] },
    { name: "regions", type: "multiselect", options: [{ key: "eu", value: "EU" }, { key: "us", value: "US" }] },
    { name: "count", type: "number" },
    { name: "owner", type: "email" },
    { name: "link", type: "url" },
    { name: "dry", type: "boolean" },
    { name: "mode", type: "text", required: true, default: "fast" },
    { name: "secret", type: "password", required: true },
  ];
  const ok: Record<string, FormValue> = { version: "1.4", secret: "s3cret" };
  it.each([
    { name: "a complete form", give: {}, errors: {}, send: { version: "1.4", secret: "s3cret", dry: false, mode: "fast" } },
    { name: "a required field left empty", give: { version: "" }, errors: { version: "is required" } },
    { name: "a required field with a default", give: { mode: "" }, errors: {} },
    { name: "too long", give: { version: "1.4.10" }, errors: { version: "must be at most 5 characters" } },
    { name: "too short", give: { version: "1" }, errors: { version: "must be at least 2 characters" } },
    { name: "an option", give: { env: "prod" }, errors: {} },
    { name: "not a number", give: { count: "many" }, errors: { count: "must be a number" } },
    { name: "a number as text", give: { count: " 12.5 " }, errors: {} },
    { name: "not an email", give: { owner: "ada at example" }, errors: { owner: "must be an email address" } },
    { name: "an email", give: { owner: "ada@example.com" }, errors: {} },
    { name: "a relative URL", give: { link: "/builds/1" }, errors: { link: "must be an absolute URL" } },
    { name: "an absolute URL", give: { link: "https://ci.example/builds/1" }, errors: {} },
    { name: "an empty multiselect is not given", give: { regions: [] }, errors: {} },
    { name: "a multiselect", give: { regions: ["eu", "us"] }, errors: {} },
    { name: "a password left empty", give: { secret: "" }, errors: { secret: "is required" } },
  ])("$name", ({ give, errors, send }) => {
    const got = checkForm(form, { ...ok, ...(give as Record<string, FormValue>) });
    expect(got.errors).toEqual(errors);
    if (send) expect(got.send).toEqual(send);
  });

  it("counts characters, not bytes, as the API does", () => {
    expect(checkForm([{ name: "v", type: "text", maxValueLength: 3 }], { v: "été" }).errors).toEqual({});
  });

  it("refuses an option outside the list", () => {
    const f: Param[] = [{ name: "env", type: "select", options: [{ key: "a", value: "A" }] }];
    expect(checkForm(f, { env: "b" }).errors).toEqual({ env: "must be one of a" });
  });
});

describe("initialValue", () => {
  it.each([
    { give: { name: "a", type: "text", default: "x" } as Param, want: "x" },
    { give: { name: "a", type: "text", value: "v", default: "x" } as Param, want: "v" },
    { give: { name: "a", type: "boolean", default: "true" } as Param, want: true },
    { give: { name: "a", type: "multiselect", default: ["eu"] } as Param, want: ["eu"] },
    { give: { name: "a", type: "password", default: "********" } as Param, want: "" },
    { give: { name: "a", type: "json", default: { k: 1 } } as Param, want: '{\n  "k": 1\n}' },
    { give: { name: "a", type: "number", default: 3 } as Param, want: "3" },
  ])("$give.type $want", ({ give, want }) => {
    expect(initialValue(give)).toEqual(want);
  });
});

describe("fieldErrorsOf", () => {
  it("puts the API's errors on the form's fields", () => {
    const form: Param[] = [{ name: "version" }, { name: "env" }];
    expect(
      fieldErrorsOf(
        [
          { field: "[0].params.version", message: "is required" },
          { field: "[0].params.other", message: "is not a field of the form" },
          { field: "[0].approved", message: "is required" },
        ],
        form,
      ),
    ).toEqual({ version: "is required" });
  });
});
