// ParamForm: a form built from parameter definitions (the API's AbstractParam), for task
// params in the designer and anywhere else a UI asks for values of declared parameters.
import { MultiSelect, NumberInput, PasswordInput, Select, Stack, Switch, Text, TextInput, Textarea } from "@mantine/core";

/**
 * ParamDefinition is the API's AbstractParam as a form reads it. (The generated type cannot
 * say it: the schema's `anyOf` of required names makes it `unknown`, and its defaults make
 * `required`, `readOnly` and `hiddenValue` look mandatory.)
 */
export interface ParamDefinition {
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
  helperText?: string;
  options?: { key: string; value: string }[];
  minValueLength?: number;
  maxValueLength?: number;
  readOnly?: boolean;
  hiddenValue?: boolean;
  [extra: string]: unknown;
}

export interface ParamFormProps {
  /** The definitions, in the order shown. */
  params: ParamDefinition[];
  /** The values given, by parameter name; a missing one shows the definition's default as a hint. */
  values: Record<string, unknown>;
  /** Called with a parameter's new value; undefined when it was emptied. */
  onChange: (name: string, value: unknown) => void;
  /** Messages to show under fields, by parameter name. */
  errors?: Record<string, string>;
  /** Prefix of the inputs' ids, unique on the page. */
  idPrefix?: string;
  readOnly?: boolean;
}

/** nameOf is a definition's name (v4 clients call it `key`). */
export const nameOf = (p: ParamDefinition) => p.name ?? p.key ?? "";

const text = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "string" ? v : JSON.stringify(v));

/** hintOf is the default, as the placeholder says it, or the definition's own placeholder. */
function hintOf(p: ParamDefinition): string | undefined {
  const d = p.default ?? p.defaultValue;
  if (p.type === "password") return p.placeholder;
  if (d !== undefined && d !== null && d !== "") return `Default: ${text(d)}`;
  return p.placeholder;
}

/**
 * ParamForm shows one field per definition by its type: text, email and url as text inputs,
 * textarea, json and the texteditor kinds as multi-line (monospace for code), password
 * masked, boolean as a switch, select and multiselect with their options, number as a number
 * input. Required ones are marked; read-only ones cannot change.
 */
export function ParamForm({ params, values, onChange, errors = {}, idPrefix = "param", readOnly = false }: ParamFormProps) {
  if (params.length === 0) return <Text c="dimmed">This task takes no parameters.</Text>;
  return (
    <Stack gap="sm">
      {params.map((p) => {
        const name = nameOf(p);
        return (
          <ParamField
            key={name}
            id={`${idPrefix}-${name}`}
            param={p}
            value={values[name]}
            error={errors[name]}
            readOnly={readOnly || p.readOnly === true}
            onChange={(v) => onChange(name, v)}
          />
        );
      })}
    </Stack>
  );
}

interface FieldProps {
  id: string;
  param: ParamDefinition;
  value: unknown;
  error?: string;
  readOnly: boolean;
  onChange: (v: unknown) => void;
}

function ParamField({ id, param: p, value, error, readOnly, onChange }: FieldProps) {
  const common = {
    id,
    label: p.label || nameOf(p),
    description: p.helpertext || p.helperText || p.description,
    required: p.required === true,
    error,
    readOnly,
  };
  const emptyToUndefined = (s: string) => (s === "" ? undefined : s);
  switch (p.type) {
    case "boolean": {
      const d = p.default ?? p.defaultValue;
      const checked = value === undefined ? d === true || d === "true" : value === true || value === "true";
      return (
        <Switch
          id={id}
          label={common.label}
          description={common.description}
          error={error}
          checked={checked}
          disabled={readOnly}
          onChange={(e) => onChange(e.currentTarget.checked)}
        />
      );
    }
    case "number":
      return (
        <NumberInput
          {...common}
          placeholder={hintOf(p)}
          value={typeof value === "number" || typeof value === "string" ? value : ""}
          onChange={(v) => onChange(v === "" ? undefined : v)}
        />
      );
    case "password":
      return (
        <PasswordInput
          {...common}
          placeholder={hintOf(p)}
          autoComplete="new-password"
          value={text(value)}
          onChange={(e) => onChange(emptyToUndefined(e.currentTarget.value))}
        />
      );
    case "select":
      return (
        <Select
          {...common}
          placeholder={hintOf(p)}
          data={(p.options ?? []).map((o) => ({ value: o.key, label: o.value || o.key }))}
          value={value === undefined ? null : text(value)}
          clearable={!p.required}
          onChange={(v) => onChange(v ?? undefined)}
        />
      );
    case "multiselect": {
      const list = Array.isArray(value) ? value.map(text) : typeof value === "string" && value !== "" ? value.split(",") : [];
      return (
        <MultiSelect
          {...common}
          placeholder={hintOf(p)}
          data={(p.options ?? []).map((o) => ({ value: o.key, label: o.value || o.key }))}
          value={list}
          onChange={(v) => onChange(v.length === 0 ? undefined : v)}
        />
      );
    }
    case "textarea":
    case "json":
    case "texteditor":
    case "texteditor::javascript":
    case "texteditor::text":
    case "texteditor::shell":
    case "texteditor::yaml": {
      const code = p.type !== "textarea" && p.type !== "texteditor::text";
      return (
        <Textarea
          {...common}
          placeholder={hintOf(p)}
          autosize
          minRows={code ? 4 : 2}
          maxRows={16}
          styles={code ? { input: { fontFamily: "var(--mantine-font-family-monospace)" } } : undefined}
          value={text(value)}
          onChange={(e) => onChange(emptyToUndefined(e.currentTarget.value))}
        />
      );
    }
    default:
      return (
        <TextInput
          {...common}
          type={p.type === "email" ? "email" : p.type === "url" ? "url" : "text"}
          placeholder={hintOf(p)}
          value={text(value)}
          onChange={(e) => onChange(emptyToUndefined(e.currentTarget.value))}
        />
      );
  }
}
