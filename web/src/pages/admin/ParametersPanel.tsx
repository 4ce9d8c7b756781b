import { Badge, Button, Code, Group, Modal, PasswordInput, Select, Stack, Switch, Table, Text, TextInput, Textarea } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorAlert } from "../../api/ErrorAlert";
import { ConfirmButton } from "./Confirm";

/**
 * Param is the AbstractParam of the contract, as far as these pages use it (the generated type
 * is unknown: the schema is an anyOf of `name` or `key` required).
 */
export interface Param {
  name?: string;
  key?: string;
  label?: string;
  description?: string;
  type?: string;
  default?: unknown;
  value?: unknown;
}

/** MASK is how the API answers a secret value; sent back, it keeps the stored one. */
export const MASK = "********";

const types = ["text", "password", "number", "boolean", "url", "email", "textarea", "json"] as const;

/** paramValue is what a parameter holds: its `value`, else its `default`. */
export function paramValue(p: Param): unknown {
  return p.value !== undefined && p.value !== null ? p.value : p.default;
}

/** shown writes a parameter's value for a table: a secret only as the API masked it. */
export function shown(p: Param): string {
  if (p.type === "password") return MASK;
  const v = paramValue(p);
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * toRequest makes the parameter to write from the form. A secret left empty is sent without
 * a value, which keeps the stored secret; typed values are parsed for number, boolean and json.
 */
export function toRequest(name: string, type: string, description: string, raw: string, editing: boolean): Param {
  const p: Param = { name, type, description: description || undefined };
  if (type === "password") {
    if (raw !== "" || !editing) p.value = raw;
    return p;
  }
  if (type === "number") p.value = raw === "" ? null : Number(raw);
  else if (type === "boolean") p.value = raw === "true";
  else if (type === "json") p.value = raw === "" ? null : (JSON.parse(raw) as unknown);
  else p.value = raw;
  return p;
}

interface Props {
  params: Param[];
  /** Whether the caller may change them (else the panel only lists). */
  canEdit: boolean;
  /** What the parameters belong to, for the dialogs' words ("the team", "the instance"). */
  owner: string;
  save: (p: Param) => Promise<unknown>;
  remove: (name: string) => Promise<unknown>;
  onChanged: () => void;
}

/** ParametersPanel lists parameters (secrets masked) and adds, edits and deletes them. */
export function ParametersPanel({ params, canEdit, owner, save, remove, onChanged }: Props) {
  const [editing, setEditing] = useState<Param | null>(null);
  const [opened, { open, close }] = useDisclosure(false);
  const sorted = [...params].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
  return (
    <Stack>
      {canEdit && (
        <Group>
          <Button
            onClick={() => {
              setEditing(null);
              open();
            }}
          >
            Add parameter
          </Button>
        </Group>
      )}
      {sorted.length === 0 ? (
        <Text c="dimmed">No parameters of {owner} yet.</Text>
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table striped aria-label="Parameters">
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Name</Table.Th>
                <Table.Th scope="col">Type</Table.Th>
                <Table.Th scope="col">Value</Table.Th>
                <Table.Th scope="col">Description</Table.Th>
                {canEdit && <Table.Th scope="col">Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {sorted.map((p) => (
                <Table.Tr key={p.name}>
                  <Table.Th scope="row">
                    <Code>{p.name}</Code>
                  </Table.Th>
                  <Table.Td>
                    {p.type === "password" ? (
                      <Badge color="grape" variant="dot" tt="none">
                        secret
                      </Badge>
                    ) : (
                      p.type ?? "text"
                    )}
                  </Table.Td>
                  <Table.Td style={{ wordBreak: "break-all" }} data-testid={`param-value-${p.name}`}>
                    {shown(p)}
                  </Table.Td>
                  <Table.Td>{p.description}</Table.Td>
                  {canEdit && (
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Button
                          size="xs"
                          variant="subtle"
                          aria-label={`Edit ${p.name}`}
                          onClick={() => {
                            setEditing(p);
                            open();
                          }}
                        >
                          Edit
                        </Button>
                        <ConfirmButton
                          label="Delete"
                          ariaLabel={`Delete ${p.name}`}
                          title={`Delete the parameter ${p.name}?`}
                          confirm="Delete parameter"
                          onConfirm={() => remove(p.name ?? "")}
                          onDone={onChanged}
                        >
                          Workflows reading <Code>{p.name}</Code> of {owner} will no longer find it.
                        </ConfirmButton>
                      </Group>
                    </Table.Td>
                  )}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal opened={opened} onClose={close} closeButtonProps={{ "aria-label": "Close" }} title={editing ? `Edit ${editing.name}` : "Add a parameter"}>
        {opened && (
          <ParamForm
            key={editing?.name ?? "new"}
            editing={editing}
            taken={params.map((p) => p.name ?? "")}
            save={save}
            onSaved={() => {
              close();
              onChanged();
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}

function ParamForm({
  editing,
  taken,
  save,
  onSaved,
}: {
  editing: Param | null;
  taken: string[];
  save: (p: Param) => Promise<unknown>;
  onSaved: () => void;
}) {
  const [name, setName] = useState(editing?.name ?? "");
  const [type, setType] = useState<string>(editing?.type ?? "text");
  const [description, setDescription] = useState(editing?.description ?? "");
  const initial = editing && editing.type !== "password" ? shown(editing) : "";
  const [value, setValue] = useState(initial);
  const [localError, setLocalError] = useState<string | null>(null);
  const mutation = useMutation({ mutationFn: save, onSuccess: onSaved });
  const nameError = !editing && taken.includes(name) ? "A parameter of this name exists: edit it instead." : undefined;
  const wasSecret = editing?.type === "password";
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        setLocalError(null);
        let p: Param;
        try {
          p = toRequest(name.trim(), type, description, value, wasSecret && type === "password");
        } catch {
          setLocalError("The value is not valid JSON.");
          return;
        }
        mutation.mutate(p);
      }}
    >
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} disabled={editing !== null} error={nameError} />
        <Select
          label="Type"
          data={types.map((t) => ({ value: t, label: t === "password" ? "password (secret)" : t }))}
          value={type}
          onChange={(t) => t && setType(t)}
          allowDeselect={false}
          comboboxProps={{ withinPortal: true }}
        />
        {type === "password" ? (
          <PasswordInput
            label="Secret value"
            value={value}
            onChange={(e) => setValue(e.currentTarget.value)}
            description={wasSecret ? "The stored secret is never shown. Leave this empty to keep it." : "Stored encrypted; never shown again."}
            autoComplete="new-password"
          />
        ) : type === "boolean" ? (
          <Switch label="Value" checked={value === "true"} onChange={(e) => setValue(e.currentTarget.checked ? "true" : "false")} />
        ) : type === "textarea" || type === "json" ? (
          <Textarea label="Value" value={value} onChange={(e) => setValue(e.currentTarget.value)} autosize minRows={3} />
        ) : (
          <TextInput label="Value" type={type === "number" ? "number" : "text"} value={value} onChange={(e) => setValue(e.currentTarget.value)} />
        )}
        <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        {localError && <Text c="red" size="sm" role="alert">{localError}</Text>}
        {mutation.error && <ErrorAlert error={mutation.error} />}
        <Group justify="flex-end">
          <Button type="submit" loading={mutation.isPending} disabled={name.trim() === "" || nameError !== undefined}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
