import { Anchor, Badge, Button, Checkbox, Group, Loader, Modal, Pagination, Stack, Table, Text, TextInput } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { AdminFrame } from "./AdminFrame";
import { ConfirmButton } from "./Confirm";
import { useTeamNameCheck } from "./teamName";

const PAGE = 25;

/** AdminTeamsPage lists every team, creates teams (the name checked as it is typed) and deletes them. */
export default function AdminTeamsPage() {
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get("page") ?? "1") || 1);
  const find = params.get("team") ?? "";
  const teams = useQuery({
    queryKey: ["teams", "admin", page, find],
    queryFn: () =>
      call(
        api.GET("/api/v2/team/query", {
          params: { query: { limit: PAGE, page: page - 1, sort: "name", order: "ASC", teams: find ? [find] : undefined } },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const [opened, { open, close }] = useDisclosure(false);
  const refresh = () => void client.invalidateQueries({ queryKey: ["teams"] });
  const list = teams.data?.content ?? [];
  const pages = Math.max(1, Math.ceil((teams.data?.totalElements ?? 0) / PAGE));
  return (
    <AdminFrame title="Teams">
      <Group align="end">
        <Button onClick={open}>Create team</Button>
        <TextInput
          label="Find a team"
          placeholder="Its exact name"
          defaultValue={find}
          onChange={(e) => {
            const v = e.currentTarget.value.trim();
            setParams(v ? { team: v } : {}, { replace: true });
          }}
        />
        {teams.isFetching && <Loader size="sm" aria-label="Loading" />}
      </Group>
      {teams.error ? (
        <ErrorAlert error={teams.error} title="The teams could not be read" />
      ) : !teams.data ? null : list.length === 0 ? (
        <Text c="dimmed">{find ? `No team is named ${find}.` : "No teams yet."}</Text>
      ) : (
        <Stack>
          <Table.ScrollContainer minWidth={700}>
            <Table striped aria-label="Teams">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Team</Table.Th>
                  <Table.Th scope="col">Name</Table.Th>
                  <Table.Th scope="col">Status</Table.Th>
                  <Table.Th scope="col">Members</Table.Th>
                  <Table.Th scope="col">Created</Table.Th>
                  <Table.Th scope="col">Actions</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((t) => (
                  <Table.Tr key={t.id ?? t.name}>
                    <Table.Th scope="row">
                      <Anchor component={Link} to={`/teams/${encodeURIComponent(t.name ?? "")}/settings`}>
                        {t.displayName || t.name}
                      </Anchor>
                    </Table.Th>
                    <Table.Td>
                      <code>{t.name}</code>
                    </Table.Td>
                    <Table.Td>
                      <Badge color={t.status === "inactive" ? "gray" : "green"} variant="dot" tt="none">
                        {t.status ?? "active"}
                      </Badge>
                    </Table.Td>
                    <Table.Td>{t.members?.length ?? 0}</Table.Td>
                    <Table.Td>{t.creationDate ? new Date(t.creationDate).toLocaleDateString() : ""}</Table.Td>
                    <Table.Td>
                      <DeleteTeam name={t.name ?? ""} onDeleted={refresh} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
          {pages > 1 && (
            <Pagination
              total={pages}
              value={page}
              onChange={(p) => setParams(find ? { team: find, page: String(p) } : { page: String(p) })}
              getControlProps={(c) => ({ "aria-label": `${c} page` })}
            />
          )}
        </Stack>
      )}
      <Modal opened={opened} onClose={close} closeButtonProps={{ "aria-label": "Close" }} title="Create a team">
        {opened && (
          <CreateTeam
            onCreated={() => {
              close();
              refresh();
            }}
          />
        )}
      </Modal>
    </AdminFrame>
  );
}

function DeleteTeam({ name, onDeleted }: { name: string; onDeleted: () => void }) {
  const [force, setForce] = useState(false);
  return (
    <ConfirmButton
      label="Delete"
      ariaLabel={`Delete team ${name}`}
      title={`Delete the team ${name}?`}
      confirm="Delete team"
      onConfirm={() => call(api.DELETE("/api/v2/team/{team}", { params: { path: { team: name }, query: { force } } }))}
      onDone={onDeleted}
    >
      <Stack gap="xs">
        <span>Its workflows, runs, schedules, parameters and tokens are removed in every service. This cannot be undone.</span>
        <Checkbox
          label="Cancel its runs that have not completed (else a team with such runs is not deleted)"
          checked={force}
          onChange={(e) => setForce(e.currentTarget.checked)}
        />
      </Stack>
    </ConfirmButton>
  );
}

function CreateTeam({ onCreated }: { onCreated: () => void }) {
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [displayName, setDisplayName] = useState("");
  const check = useTeamNameCheck(name);
  const create = useMutation({
    mutationFn: () =>
      call(api.POST("/api/v2/team", { body: { name: name.trim(), displayName: displayName.trim() || undefined } })),
    onSuccess: (t) => {
      onCreated();
      navigate(`/teams/${encodeURIComponent(t.name ?? "")}/settings/members`);
    },
  });
  const description =
    check.state === "free" ? (
      <span>
        Free: the team will be <code>{check.slug}</code>.
      </span>
    ) : check.state === "refused" ? (
      <Text span c="red.9" size="xs" fw={600}>{`${check.reason}: ${check.message}`}</Text>
    ) : check.state === "checking" ? (
      "Checking…"
    ) : (
      "Letters, digits and dashes; it becomes the team's slug in paths."
    );
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <Stack>
        <TextInput
          label="Name"
          required
          value={name}
          onChange={(e) => setName(e.currentTarget.value)}
          description={description}
          aria-invalid={check.state === "refused"}
          data-autofocus
        />
        <TextInput label="Display name" value={displayName} onChange={(e) => setDisplayName(e.currentTarget.value)} />
        {create.error && <ErrorAlert error={create.error} />}
        <Group justify="flex-end">
          <Button type="submit" loading={create.isPending} disabled={check.state !== "free"}>
            Create
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
