// A workflow's versions with their changelog notes, newest first; any two compare.
import { Anchor, Button, Center, Group, Loader, Radio, Stack, Table, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router";
import { ErrorAlert, api, call } from "../../api";

export default function HistoryPage() {
  const { team = "", name = "" } = useParams();
  const navigate = useNavigate();
  const changelog = useQuery({
    queryKey: ["workflow-changelog", team, name],
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflow/{name}/changelog", { params: { path: { team, name } } })),
  });
  const [from, setFrom] = useState<string>();
  const [to, setTo] = useState<string>();
  const base = `/teams/${encodeURIComponent(team)}/workflows/${encodeURIComponent(name)}`;
  const entries = changelog.data ?? [];
  // By default the latest version against the one before it.
  const f = from ?? (entries[1] ? String(entries[1].version) : undefined);
  const t = to ?? (entries[0] ? String(entries[0].version) : undefined);

  return (
    <Stack>
      <Group gap="xs">
        <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/workflows`} size="sm">
          Workflows
        </Anchor>
        <Text size="sm" aria-hidden>
          /
        </Text>
        <Anchor component={Link} to={base} size="sm">
          {name}
        </Anchor>
      </Group>
      <Title order={1}>History of {name}</Title>
      {changelog.isPending ? (
        <Center>
          <Loader aria-label="Loading" />
        </Center>
      ) : changelog.error ? (
        <ErrorAlert error={changelog.error} title="The history could not be read" />
      ) : entries.length === 0 ? (
        <Text>No versions yet.</Text>
      ) : (
        <>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Version</Table.Th>
                <Table.Th>Note</Table.Th>
                <Table.Th>Author</Table.Th>
                <Table.Th>Saved</Table.Th>
                <Table.Th>From</Table.Th>
                <Table.Th>To</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {entries.map((e) => (
                <Table.Tr key={e.version}>
                  <Table.Td>
                    <Anchor component={Link} to={`${base}?version=${e.version}`}>
                      Version {e.version}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>{e.reason || <Text c="dimmed">no note</Text>}</Table.Td>
                  <Table.Td>{e.author}</Table.Td>
                  <Table.Td>{e.date ? new Date(e.date).toLocaleString() : ""}</Table.Td>
                  <Table.Td>
                    <Radio
                      name="from"
                      aria-label={`Compare from version ${e.version}`}
                      checked={f === String(e.version)}
                      onChange={() => setFrom(String(e.version))}
                    />
                  </Table.Td>
                  <Table.Td>
                    <Radio
                      name="to"
                      aria-label={`Compare to version ${e.version}`}
                      checked={t === String(e.version)}
                      onChange={() => setTo(String(e.version))}
                    />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
          <Group>
            <Button disabled={!f || !t || f === t} onClick={() => void navigate(`${base}/diff?from=${f}&to=${t}`)}>
              Compare {f && t && f !== t ? `version ${f} with version ${t}` : "two versions"}
            </Button>
          </Group>
        </>
      )}
    </Stack>
  );
}
