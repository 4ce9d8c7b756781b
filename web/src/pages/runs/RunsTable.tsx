import { Anchor, Center, Loader, Table, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { StatusBadge } from "../../components/StatusBadge";

export function RunsTable({ team }: { team: string }) {
  const runs = useQuery({
    queryKey: ["runs", team],
    queryFn: () =>
      call(api.GET("/api/v2/team/{team}/workflowrun/query", { params: { path: { team }, query: { limit: 50 } } })),
  });
  if (runs.isPending)
    return (
      <Center>
        <Loader aria-label="Loading" />
      </Center>
    );
  if (runs.error) return <ErrorAlert error={runs.error} title="The runs could not be read" />;
  if (runs.data.content.length === 0) return <Text>No runs yet.</Text>;
  return (
    <Table>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Status</Table.Th>
          <Table.Th>Workflow</Table.Th>
          <Table.Th>Run</Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {runs.data.content.map((r) => (
          <Table.Tr key={r.id}>
            <Table.Td>
              <StatusBadge status={r.status} />
            </Table.Td>
            <Table.Td>{r.workflowDisplayName || r.workflowName || r.workflowRef}</Table.Td>
            <Table.Td>
              <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/runs/${r.id}`}>
                {r.id}
              </Anchor>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
