// The workflow document as YAML: the same document `baton apply -f` takes.
import { parse, stringify } from "yaml";
import type { Workflow } from "./model";

/** toYaml writes the document as YAML, in the document's own field order. */
export function toYaml(w: Workflow): string {
  return stringify(w, { lineWidth: 0, aliasDuplicateObjects: false });
}

export type Parsed = { ok: true; workflow: Workflow } | { ok: false; error: string };

/**
 * fromYaml reads a YAML (or JSON) workflow document. A `kind` other than Workflow is refused
 * (a template or a task is not a team's workflow); `kind: Workflow` itself is dropped, as
 * `baton apply` does.
 */
export function fromYaml(text: string): Parsed {
  let v: unknown;
  try {
    v = parse(text, { prettyErrors: true, uniqueKeys: true });
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) {
    return { ok: false, error: "The document must be a mapping: a workflow with a name and its tasks." };
  }
  const o = { ...(v as Record<string, unknown>) };
  if ("kind" in o) {
    if (o.kind !== "Workflow") return { ok: false, error: `This is a ${String(o.kind)}, not a Workflow.` };
    delete o.kind;
  }
  if (typeof o.name !== "string" || o.name === "") return { ok: false, error: "The workflow needs a name." };
  if (o.tasks !== undefined && !Array.isArray(o.tasks)) return { ok: false, error: "tasks must be a list." };
  for (const [i, t] of ((o.tasks as unknown[]) ?? []).entries()) {
    if (typeof t !== "object" || t === null || typeof (t as { name?: unknown }).name !== "string") {
      return { ok: false, error: `tasks[${i}] needs a name.` };
    }
    const deps = (t as { dependencies?: unknown }).dependencies;
    if (deps !== undefined && !Array.isArray(deps)) return { ok: false, error: `tasks[${i}].dependencies must be a list.` };
  }
  return { ok: true, workflow: o as Workflow };
}
