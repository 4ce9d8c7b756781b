import { Button, Group, Select, Stack, Table, Text, TextInput } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert, notifyError } from "../../api/ErrorAlert";
import { ConfirmButton } from "./Confirm";
import { teamKey } from "./team";

type Role = "owner" | "editor" | "reader";
const roles: { value: Role; label: string }[] = [
  { value: "owner", label: "Owner" },
  { value: "editor", label: "Editor" },
  { value: "reader", label: "Reader" },
];

/** MembersPanel lists a team's members; an owner adds them by email, changes roles and removes them. */
export function MembersPanel({ team, manage }: { team: Schemas["Team"]; manage: boolean }) {
  const client = useQueryClient();
  const name = team.name ?? "";
  const refresh = () => client.invalidateQueries({ queryKey: teamKey(name) });
  const patch = (members: NonNullable<Schemas["TeamRequest"]["members"]>) =>
    call(api.PATCH("/api/v2/team/{team}", { params: { path: { team: name } }, body: { members } }));
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("reader");
  const add = useMutation({
    mutationFn: () => patch([{ email: email.trim(), role }]),
    onSuccess: () => {
      setEmail("");
      void refresh();
    },
  });
  const changeRole = useMutation({
    mutationFn: ({ id, role }: { id: string; role: Role }) => patch([{ id, role }]),
    onSuccess: refresh,
    onError: (e) => notifyError(e, "The role was not changed"),
  });
  const members = [...(team.members ?? [])].sort((a, b) => (a.email ?? "").localeCompare(b.email ?? ""));
  return (
    <Stack>
      {manage && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            add.mutate();
          }}
        >
          <Group align="end">
            <TextInput
              label="Email"
              type="email"
              required
              placeholder="ann@example.com"
              value={email}
              onChange={(e) => setEmail(e.currentTarget.value)}
              description="Someone not yet known to Baton is added as a pending user."
              miw={280}
            />
            <Select
              label="Role"
              data={roles}
              value={role}
              onChange={(r) => r && setRole(r as Role)}
              allowDeselect={false}
              w={140}
              comboboxProps={{ withinPortal: true }}
            />
            <Button type="submit" loading={add.isPending} disabled={!email.includes("@")}>
              Add member
            </Button>
          </Group>
        </form>
      )}
      {add.error && <ErrorAlert error={add.error} title="The member was not added" />}
      {members.length === 0 ? (
        <Text c="dimmed">No members: the team acts through its tokens only.</Text>
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table striped aria-label="Members">
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Email</Table.Th>
                <Table.Th scope="col">Name</Table.Th>
                <Table.Th scope="col">Role</Table.Th>
                {manage && <Table.Th scope="col">Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {members.map((m) => {
                const who = m.email || m.name || m.id || "";
                return (
                  <Table.Tr key={m.id ?? m.email}>
                    <Table.Th scope="row">{m.email}</Table.Th>
                    <Table.Td>{m.name}</Table.Td>
                    <Table.Td>
                      {manage ? (
                        <Select
                          aria-label={`Role of ${who}`}
                          data={roles}
                          value={m.role ?? null}
                          onChange={(r) => r && r !== m.role && changeRole.mutate({ id: m.id ?? "", role: r as Role })}
                          allowDeselect={false}
                          w={140}
                          size="xs"
                          comboboxProps={{ withinPortal: true }}
                        />
                      ) : (
                        m.role
                      )}
                    </Table.Td>
                    {manage && (
                      <Table.Td>
                        <ConfirmButton
                          label="Remove"
                          ariaLabel={`Remove ${who}`}
                          title={`Remove ${who} from ${team.displayName || name}?`}
                          confirm="Remove member"
                          onConfirm={() =>
                            call(api.DELETE("/api/v2/team/{team}/members", { params: { path: { team: name } }, body: [{ id: m.id }] }))
                          }
                          onDone={refresh}
                        >
                          They lose access to the team's workflows and runs, and leave its approver groups.
                        </ConfirmButton>
                      </Table.Td>
                    )}
                  </Table.Tr>
                );
              })}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
    </Stack>
  );
}
