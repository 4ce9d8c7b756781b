// "Run again": a form of the workflow version's params, filled in with the values this run
// had; submitting makes a new run of the same version with the same labels and opens it.
import { Button, Group, JsonInput, Modal, MultiSelect, NumberInput, PasswordInput, Select, Stack, Switch, Text, TextInput, Textarea } from "@mantine/core";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useNavigate } from "react-router";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import type { Run } from "./status";

/**
 * Param is the part of an AbstractParam the form reads (the generated type is `unknown`:
 * the schema's anyOf of `name` or `key` defeats the generator).
 */
export interface Param {
  name?: string;
  key?: string;
  label?: string;
  description?: string;
  helpertext?: string;
  type?: string;
  default?: unknown;
  defaultValue?: unknown;
  required?: boolean;
  placeholder?: string;
  readOnly?: boolean;
  options?: { key: string; value: string }[];
}

const MASK = "********";

function nameOf(p: Param): string {
  return p.name ?? p.key ?? "";
}

/** initialValue is what a field starts with: the run's value, else the param's default; never a mask. */
export function initialValue(p: Param, run: Run): unknown {
  const name = nameOf(p);
  const had = run.params?.find((v) => v.name === name);
  let v = had ? had.value : (p.default ?? p.defaultValue);
  if (p.type === "password" || v === MASK) return "";
  if (p.type === "json" && v !== undefined && typeof v !== "string") v = JSON.stringify(v, null, 2);
  if (p.type === "boolean") return v === true || v === "true";
  if (p.type === "multiselect") return Array.isArray(v) ? v.map(String) : v ? String(v).split(",") : [];
  if (p.type === "number") return v === undefined || v === "" ? "" : Number(v);
  return v === undefined || v === null ? "" : String(v);
}

/**
 * submitValues turns the form into the submit's params: JSON fields parsed, and empty
 * fields (a password left empty, a cleared optional value) left out so the workflow's
 * value applies. It throws a message naming a JSON field that does not parse.
 */
export function submitValues(params: Param[], values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of params) {
    const name = nameOf(p);
    const v = values[name];
    if (v === undefined || v === "" || (Array.isArray(v) && v.length === 0 && p.type !== "multiselect")) continue;
    if (p.type === "json" && typeof v === "string") {
      try {
        out[name] = JSON.parse(v);
      } catch {
        throw new Error(`${p.label || name}: not valid JSON`);
      }
      continue;
    }
    out[name] = v;
  }
  return out;
}

function Field({ p, value, onChange }: { p: Param; value: unknown; onChange: (v: unknown) => void }) {
  const common = {
    label: p.label || nameOf(p),
    description: p.helpertext || p.description,
    required: p.required,
    disabled: p.readOnly,
    placeholder: p.placeholder,
  };
  const options = (p.options ?? []).map((o) => ({ value: o.key, label: o.value }));
  switch (p.type) {
    case "boolean":
      return <Switch label={common.label} description={common.description} disabled={common.disabled} checked={value === true} onChange={(e) => onChange(e.currentTarget.checked)} />;
    case "number":
      return <NumberInput {...common} value={value as number | string} onChange={(v) => onChange(v)} />;
    case "password":
      return <PasswordInput {...common} placeholder="Left empty: the workflow's value" value={String(value ?? "")} onChange={(e) => onChange(e.currentTarget.value)} />;
    case "select":
      return <Select {...common} data={options} value={(value as string) || null} onChange={(v) => onChange(v ?? "")} clearable={!p.required} />;
    case "multiselect":
      return <MultiSelect {...common} data={options} value={(value as string[]) ?? []} onChange={(v) => onChange(v)} />;
    case "json":
      return <JsonInput {...common} autosize minRows={3} value={String(value ?? "")} onChange={(v) => onChange(v)} />;
    case "textarea":
    case "texteditor":
    case "texteditor::javascript":
    case "texteditor::text":
    case "texteditor::shell":
    case "texteditor::yaml":
      return <Textarea {...common} autosize minRows={3} value={String(value ?? "")} onChange={(e) => onChange(e.currentTarget.value)} styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }} />;
    default:
      return <TextInput {...common} type={p.type === "email" ? "email" : p.type === "url" ? "url" : "text"} value={String(value ?? "")} onChange={(e) => onChange(e.currentTarget.value)} />;
  }
}

export interface RunAgainProps {
  team: string;
  run: Run;
  params: Param[];
  opened: boolean;
  onClose: () => void;
}

export function RunAgain({ team, run, params, opened, onClose }: RunAgainProps) {
  const navigate = useNavigate();
  const [values, setValues] = useState<Record<string, unknown>>(() => Object.fromEntries(params.map((p) => [nameOf(p), initialValue(p, run)])));
  const [formError, setFormError] = useState<string | null>(null);
  const submit = useMutation({
    mutationFn: (body: Schemas["WorkflowSubmitRequest"]) =>
      call(
        api.POST("/api/v2/team/{team}/workflow/{name}/submit", {
          params: { path: { team, name: run.workflowRef ?? "" } },
          body,
        }),
      ),
    onSuccess: (r) => {
      onClose();
      void navigate(`/teams/${encodeURIComponent(team)}/runs/${encodeURIComponent(r.id ?? "")}`);
    },
  });
  const onSubmit = (e: React.FormEvent) => {
    e.preventDefault();
    setFormError(null);
    let body: Record<string, unknown>;
    try {
      body = submitValues(params, values);
    } catch (err) {
      setFormError((err as Error).message);
      return;
    }
    submit.mutate({ params: body, workflowVersion: run.workflowVersion, labels: run.labels });
  };
  return (
    <Modal closeButtonProps={{ "aria-label": "Close" }} opened={opened} onClose={onClose} title={`Run ${run.workflowDisplayName || run.workflowRef} again`} size="lg">
      <form onSubmit={onSubmit}>
        <Stack>
          <Text size="sm" c="dimmed">
            A new run of version {run.workflowVersion} with these params and this run's labels. Secret values read as masked: left
            empty, the workflow's own value is used.
          </Text>
          {params.length === 0 && <Text size="sm">The workflow has no params.</Text>}
          {params.map((p) => (
            <Field key={nameOf(p)} p={p} value={values[nameOf(p)]} onChange={(v) => setValues((s) => ({ ...s, [nameOf(p)]: v }))} />
          ))}
          {formError && (
            <Text c="red" size="sm" role="alert">
              {formError}
            </Text>
          )}
          {submit.error && <ErrorAlert error={submit.error} title="The run could not be submitted" />}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Close
            </Button>
            <Button type="submit" loading={submit.isPending}>
              Submit the run
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  );
}
