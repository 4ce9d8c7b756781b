import { Badge, Button, Group, Modal, MultiSelect, Stack, Table, Text, TextInput } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { ConfirmButton } from "./Confirm";
import { teamKey } from "./team";

type Group_ = Schemas["ApproverGroup"];

/** ApproverGroupsPanel lists a team's approver groups; an owner creates, edits and deletes them. */
export function ApproverGroupsPanel({ team, manage }: { team: Schemas["Team"]; manage: boolean }) {
  const client = useQueryClient();
  const name = team.name ?? "";
  const refresh = () => client.invalidateQueries({ queryKey: teamKey(name) });
  const [editing, setEditing] = useState<Group_ | null>(null);
  const [opened, { open, close }] = useDisclosure(false);
  const groups = [...(team.approverGroups ?? [])].sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
  const members = (team.members ?? []).map((m) => ({ value: m.id ?? "", label: m.email || m.name || m.id || "" }));
  return (
    <Stack>
      <Text size="sm" c="dimmed">
        An approval gate may name a group: only its members may approve it. A group holds members of the team.
      </Text>
      {manage && (
        <Group>
          <Button
            onClick={() => {
              setEditing(null);
              open();
            }}
          >
            Create approver group
          </Button>
        </Group>
      )}
      {groups.length === 0 ? (
        <Text c="dimmed">No approver groups yet.</Text>
      ) : (
        <Table.ScrollContainer minWidth={600}>
          <Table striped aria-label="Approver groups">
            <Table.Thead>
              <Table.Tr>
                <Table.Th scope="col">Group</Table.Th>
                <Table.Th scope="col">Approvers</Table.Th>
                {manage && <Table.Th scope="col">Actions</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {groups.map((g) => (
                <Table.Tr key={g.id ?? g.name}>
                  <Table.Th scope="row">{g.name}</Table.Th>
                  <Table.Td>
                    <Group gap={4}>
                      {(g.approvers ?? []).length === 0 ? (
                        <Text size="sm" c="dimmed">
                          nobody
                        </Text>
                      ) : (
                        (g.approvers ?? []).map((a) => (
                          <Badge key={a.id ?? a.email} variant="default" tt="none">
                            {a.email || a.name || a.id}
                          </Badge>
                        ))
                      )}
                    </Group>
                  </Table.Td>
                  {manage && (
                    <Table.Td>
                      <Group gap={4} wrap="nowrap">
                        <Button
                          size="xs"
                          variant="subtle"
                          aria-label={`Edit ${g.name}`}
                          onClick={() => {
                            setEditing(g);
                            open();
                          }}
                        >
                          Edit
                        </Button>
                        <ConfirmButton
                          label="Delete"
                          ariaLabel={`Delete ${g.name}`}
                          title={`Delete the approver group ${g.name}?`}
                          confirm="Delete group"
                          onConfirm={() =>
                            call(api.DELETE("/api/v2/team/{team}/approvers", { params: { path: { team: name } }, body: [g.id ?? ""] }))
                          }
                          onDone={refresh}
                        >
                          Approval gates naming this group can then be approved by none of its members.
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
      <Modal opened={opened} onClose={close} closeButtonProps={{ "aria-label": "Close" }} title={editing ? `Edit ${editing.name}` : "Create an approver group"}>
        {opened && (
          <GroupForm
            team={name}
            editing={editing}
            members={members}
            taken={groups.map((g) => g.name ?? "")}
            onSaved={() => {
              close();
              void refresh();
            }}
          />
        )}
      </Modal>
    </Stack>
  );
}

function GroupForm({
  team,
  editing,
  members,
  taken,
  onSaved,
}: {
  team: string;
  editing: Group_ | null;
  members: { value: string; label: string }[];
  taken: string[];
  onSaved: () => void;
}) {
  const [name, setName] = useState(editing?.name ?? "");
  const [approvers, setApprovers] = useState<string[]>((editing?.approvers ?? []).map((a) => a.id ?? "").filter(Boolean));
  const save = useMutation({
    mutationFn: () =>
      call(
        api.PATCH("/api/v2/team/{team}", {
          params: { path: { team } },
          body: { approverGroups: [{ name: name.trim(), approvers: approvers.map((id) => ({ id })) }] },
        }),
      ),
    onSuccess: onSaved,
  });
  const nameError = !editing && taken.includes(name.trim()) ? "A group of this name exists: edit it instead." : undefined;
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        save.mutate();
      }}
    >
      <Stack>
        <TextInput label="Name" required value={name} onChange={(e) => setName(e.currentTarget.value)} disabled={editing !== null} error={nameError} />
        <MultiSelect
          label="Approvers"
          description="Members of the team."
          data={members}
          value={approvers}
          onChange={setApprovers}
          searchable
          comboboxProps={{ withinPortal: true }}
        />
        {save.error && <ErrorAlert error={save.error} />}
        <Group justify="flex-end">
          <Button type="submit" loading={save.isPending} disabled={name.trim() === "" || nameError !== undefined}>
            Save
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
