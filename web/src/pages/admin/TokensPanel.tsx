import { Badge, Button, Code, Group, Modal, Stack, Table, TagsInput, Text, TextInput } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { ConfirmButton } from "./Confirm";
import { SecretOnce } from "./SecretOnce";

type TokenType = "team" | "global";

/** The permissions offered as suggestions; any `<resource>/<action>` is accepted. */
const suggestions = [
  "**/read",
  "**/write",
  "**/action",
  "**/**",
  "workflow/read",
  "workflow/write",
  "workflowrun/read",
  "workflowrun/write",
  "workflowrun/action",
  "action/action",
  "taskrun/read",
  "insights/read",
  "parameter/read",
  "team/read",
];

/** expiry turns a date input (YYYY-MM-DD) into the end of that day, UTC, as the API reads RFC 3339. */
export function expiry(day: string): string | undefined {
  if (day === "") return undefined;
  return `${day}T23:59:59Z`;
}

/**
 * TokensPanel lists the tokens of a team (type team, principal the team) or of the instance
 * (type global), creates them — showing the secret once — and revokes them.
 */
export function TokensPanel({ type, principal }: { type: TokenType; principal?: string }) {
  const client = useQueryClient();
  const key = ["tokens", type, principal ?? ""];
  const tokens = useQuery({
    queryKey: key,
    queryFn: () =>
      call(
        api.GET("/api/v2/token/query", {
          params: {
            query: {
              types: [type],
              principals: principal ? [principal] : undefined,
              limit: 100,
              sort: "creationDate",
              order: "DESC",
            },
          },
        }),
      ),
  });
  const [opened, { open, close }] = useDisclosure(false);
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null);
  const refresh = () => client.invalidateQueries({ queryKey: key });
  const list = tokens.data?.content ?? [];
  return (
    <Stack>
      <Group>
        <Button onClick={open}>Create token</Button>
      </Group>
      {tokens.error ? (
        <ErrorAlert error={tokens.error} title="Tokens could not be read" />
      ) : tokens.isPending ? (
        <Text c="dimmed">Loading tokens…</Text>
      ) : list.length === 0 ? (
        <Text c="dimmed">No {type} tokens yet.</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped aria-label="Tokens">
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Name</Table.Th>
                <Table.Th scope="col">Permissions</Table.Th>
                <Table.Th scope="col">Created</Table.Th>
                <Table.Th scope="col">Expires</Table.Th>
                <Table.Th scope="col">Last used</Table.Th>
                <Table.Th scope="col">State</Table.Th>
                <Table.Th scope="col">Actions</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((t) => (
                <TokenRow key={t.id} token={t} onRevoked={refresh} />
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      <Modal opened={opened} onClose={close} closeButtonProps={{ "aria-label": "Close" }} title={type === "team" ? `Create a token of ${principal}` : "Create a global token"}>
        {opened && (
          <CreateToken
            type={type}
            principal={principal}
            onCreated={(name, token) => {
              close();
              setSecret({ name, token });
              void refresh();
            }}
          />
        )}
      </Modal>
      <SecretOnce secret={secret?.token ?? null} name={secret?.name ?? ""} onClose={() => setSecret(null)} />
    </Stack>
  );
}

const when = (d: string | undefined) => (d ? new Date(d).toLocaleString() : "—");

function TokenRow({ token: t, onRevoked }: { token: Schemas["Token"]; onRevoked: () => void }) {
  const name = t.name || t.id || "";
  return (
    <Table.Tr>
      <Table.Th scope="row">
        {name}
        {t.description && (
          <Text size="xs" c="dimmed">
            {t.description}
          </Text>
        )}
      </Table.Th>
      <Table.Td>
        <Group gap={4}>
          {(t.permissions ?? []).map((p) => (
            <Code key={p}>{p}</Code>
          ))}
        </Group>
      </Table.Td>
      <Table.Td>{when(t.creationDate)}</Table.Td>
      <Table.Td>{t.expirationDate ? when(t.expirationDate) : "never"}</Table.Td>
      <Table.Td>{when(t.lastUsed)}</Table.Td>
      <Table.Td>
        <Badge color={t.valid ? "green" : "gray"} variant="dot" tt="none">
          {t.valid ? "valid" : "revoked or expired"}
        </Badge>
      </Table.Td>
      <Table.Td>
        {t.valid && (
          <ConfirmButton
            label="Revoke"
            ariaLabel={`Revoke ${name}`}
            title={`Revoke the token ${name}?`}
            confirm="Revoke token"
            onConfirm={() => call(api.DELETE("/api/v2/token/{id}", { params: { path: { id: t.id ?? "" } } }))}
            onDone={onRevoked}
          >
            Whatever uses it stops working within seconds, and so does every token made with it. This cannot be undone.
          </ConfirmButton>
        )}
      </Table.Td>
    </Table.Tr>
  );
}

function CreateToken({
  type,
  principal,
  onCreated,
}: {
  type: TokenType;
  principal?: string;
  onCreated: (name: string, secret: string) => void;
}) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [permissions, setPermissions] = useState<string[]>(["**/read"]);
  const [expires, setExpires] = useState("");
  const create = useMutation({
    mutationFn: () =>
      call(
        api.POST("/api/v2/token", {
          body: {
            type,
            name,
            principal,
            description: description || undefined,
            permissions,
            expirationDate: expiry(expires),
          },
        }),
      ),
    onSuccess: (r) => onCreated(name, r.token),
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} />
        <TextInput label="Description" value={description} onChange={(e) => setDescription(e.currentTarget.value)} />
        <TagsInput
          label="Permissions"
          description="<resource>/<action>, ** for any; never more than you hold."
          data={suggestions}
          value={permissions}
          onChange={setPermissions}
          comboboxProps={{ withinPortal: true }}
        />
        <TextInput
          type="date"
          label="Expires (end of day, UTC)"
          description="Empty: never, unless you are signed in with a token that expires."
          value={expires}
          min={new Date().toISOString().slice(0, 10)}
          onChange={(e) => setExpires(e.currentTarget.value)}
        />
        {create.error && <ErrorAlert error={create.error} />}
        <Group justify="flex-end">
          <Button type="submit" loading={create.isPending} disabled={name.trim() === ""}>
            Create
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
