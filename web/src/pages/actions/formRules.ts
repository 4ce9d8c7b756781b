// The rules a manual action's form is checked with, as the API checks a completion
// (services/runs, domain.CheckForm): a field left empty takes its default, else is refused
// when required; a given value must fit the field's type, options and length bounds; a
// value outside the form is refused. The UI refuses what the API would, on the field,
// before sending; the API's own answer is still shown should the two ever disagree.
/**
 * Param is the contract's AbstractParam as a form reads it. The generated type is not
 * usable as is (its `anyOf` of name or key makes it `unknown`), so it is spelled here;
 * parameter lists of the API are read as Param[] with asParams.
 */
export interface Param {
  name?: string;
  key?: string;
  label?: string;
  description?: string;
  type?: string;
  default?: unknown;
  defaultValue?: unknown;
  value?: unknown;
  required?: boolean;
  placeholder?: string;
  helpertext?: string;
  options?: { key?: string; value?: string }[];
  minValueLength?: number;
  maxValueLength?: number;
  readOnly?: boolean;
  hiddenValue?: boolean;
}

/** asParams reads an API list of parameter definitions, leaving out what is not one. */
export function asParams(list: unknown): Param[] {
  if (!Array.isArray(list)) return [];
  return list.filter((p): p is Param => typeof p === "object" && p !== null && (typeof p.name === "string" || typeof p.key === "string"));
}

/** FormValue is what a field holds while edited: text, a switch, or chosen options. */
export type FormValue = string | boolean | string[];

/** paramName is a parameter's name, under either spelling. */
export function paramName(p: Param): string {
  return p.name ?? p.key ?? "";
}

/** isSecret says whether a field's value is masked: password fields and hidden values. */
export function isSecret(p: Param): boolean {
  return p.type === "password" || p.hiddenValue === true;
}

/** defaultOf is a field's default as the API reads it: its `value`, else its `default`. */
export function defaultOf(p: Param): unknown {
  for (const v of [p.value, p.default, p.defaultValue]) {
    if (v !== undefined && v !== null) return v;
  }
  return undefined;
}

/** initialValue is what a field starts with: its default in the field's own shape. */
export function initialValue(p: Param): FormValue {
  const d = defaultOf(p);
  switch (p.type) {
    case "boolean":
      return d === true || d === "true";
    case "multiselect":
      return Array.isArray(d) ? d.map(String) : typeof d === "string" && d !== "" ? [d] : [];
  }
  if (d === undefined) return "";
  // A masked default is not a value the person knows: they type the secret again.
  if (isSecret(p) && d === "********") return "";
  if (typeof d === "string") return d;
  return p.type === "json" ? JSON.stringify(d, null, 2) : String(d);
}

const empty = (v: unknown) => v === undefined || v === null || v === "";

/** wireValue is the JSON value a field's edited value is sent as; undefined sends nothing. */
export function wireValue(p: Param, v: FormValue): unknown {
  if (Array.isArray(v)) return v.length === 0 ? undefined : v;
  if (typeof v === "boolean") return v;
  if (v === "") return undefined;
  if (p.type === "json") {
    try {
      return JSON.parse(v);
    } catch {
      return v;
    }
  }
  return v;
}

const emailRE = /^[^\s<>@]+@[^\s<>@]+$/;

/** checkValue answers what is wrong with v as the value of p, or "" (the API's words). */
export function checkValue(p: Param, v: unknown): string {
  const keys = (p.options ?? []).map((o) => o.key ?? "");
  switch (p.type) {
    case "number": {
      if (typeof v === "number") return Number.isFinite(v) ? "" : "must be a number";
      if (typeof v === "string" && v.trim() !== "" && Number.isFinite(Number(v.trim()))) return "";
      return "must be a number";
    }
    case "boolean":
      return v === true || v === false || v === "true" || v === "false" ? "" : "must be true or false";
    case "json":
      return "";
    case "select":
      return typeof v === "string" && (keys.length === 0 || keys.includes(v)) ? "" : `must be one of ${keys.join(", ")}`;
    case "multiselect":
      if (!Array.isArray(v)) return "must be a list of the options";
      return v.every((e) => typeof e === "string" && (keys.length === 0 || keys.includes(e)))
        ? ""
        : `must hold only ${keys.join(", ")}`;
  }
  if (typeof v !== "string") return "must be text";
  const n = [...v].length;
  if (p.minValueLength !== undefined && n < p.minValueLength) return `must be at least ${p.minValueLength} characters`;
  if (p.maxValueLength !== undefined && n > p.maxValueLength) return `must be at most ${p.maxValueLength} characters`;
  if (p.type === "email" && !emailRE.test(v)) return "must be an email address";
  if (p.type === "url") {
    let ok = false;
    try {
      const u = new URL(v);
      ok = u.protocol !== "" && u.host !== "";
    } catch {
      ok = false;
    }
    if (!ok) return "must be an absolute URL";
  }
  return "";
}

/**
 * checkForm checks a form's values as the API does: it answers the values to send (name →
 * JSON value, empty fields left out so that the API fills their defaults) and the errors by
 * field name, empty when the form may be sent.
 */
export function checkForm(
  form: Param[],
  values: Record<string, FormValue>,
): { send: Record<string, unknown>; errors: Record<string, string> } {
  const send: Record<string, unknown> = {};
  const errors: Record<string, string> = {};
  for (const p of form) {
    const name = paramName(p);
    let v = wireValue(p, values[name] ?? initialValue(p));
    const given = !empty(v);
    if (!given) {
      const d = defaultOf(p);
      if (!empty(d)) v = d;
    }
    if (empty(v)) {
      if (p.required) errors[name] = "is required";
      continue;
    }
    const msg = checkValue(p, v);
    if (msg !== "") {
      errors[name] = msg;
      continue;
    }
    if (given) send[name] = v;
  }
  return { send, errors };
}

/**
 * fieldErrorsOf reads the API's field errors of a decision (`[0].params.<name>`) as errors by
 * field name; those of no field of the form stay for the alert.
 */
export function fieldErrorsOf(
  errors: { field?: string; message?: string }[],
  form: Param[],
): Record<string, string> {
  const names = new Set(form.map(paramName));
  const out: Record<string, string> = {};
  for (const e of errors) {
    const m = /^(?:\[\d+\]\.)?params\.(.+)$/.exec(e.field ?? "");
    const name = m?.[1];
    if (name !== undefined && names.has(name)) out[name] = e.message ?? "is not valid";
  }
  return out;
}
