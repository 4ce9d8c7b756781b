import { Table, Text } from "@mantine/core";
import type { Schemas } from "../../api/client";
import { formatDuration } from "../insights/insights";

type Quotas = Schemas["Quotas"];

const num = (n: number | undefined) => (n === undefined ? "—" : n.toLocaleString());

/** QuotasPanel shows a team's limits and what it uses of them; only admins change them (through the API). */
export function QuotasPanel({ quotas }: { quotas: Quotas | undefined }) {
  if (!quotas) return <Text c="dimmed">The team's quotas were not answered.</Text>;
  const rows: { what: string; used: string; limit: string }[] = [
    { what: "Workflows", used: num(quotas.currentWorkflowCount), limit: num(quotas.maxWorkflowCount) },
    { what: "Runs this month", used: num(quotas.currentRuns), limit: num(quotas.maxWorkflowRunMonthly) },
    { what: "Concurrent runs", used: num(quotas.currentConcurrentRuns), limit: num(quotas.maxConcurrentRuns) },
    { what: "Run duration", used: "", limit: quotas.maxWorkflowRunDuration === undefined ? "—" : `${num(quotas.maxWorkflowRunDuration)} min` },
    { what: "Workflow storage", used: "", limit: quotas.maxWorkflowStorage === undefined ? "—" : `${num(quotas.maxWorkflowStorage)} GiB` },
    { what: "Run storage", used: "", limit: quotas.maxWorkflowRunStorage === undefined ? "—" : `${num(quotas.maxWorkflowRunStorage)} GiB` },
    {
      what: "Total run time this month",
      used: quotas.currentRunTotalDuration === undefined ? "" : formatDuration(quotas.currentRunTotalDuration),
      limit: "",
    },
    {
      what: "Median run time this month",
      used: quotas.currentRunMedianDuration === undefined ? "" : formatDuration(quotas.currentRunMedianDuration),
      limit: "",
    },
  ];
  return (
    <>
      <Table striped aria-label="Quotas" maw={640}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">Quota</Table.Th>
            <Table.Th scope="col">Used</Table.Th>
            <Table.Th scope="col">Limit</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((r) => (
            <Table.Tr key={r.what}>
              <Table.Th scope="row">{r.what}</Table.Th>
              <Table.Td>{r.used}</Table.Td>
              <Table.Td>{r.limit}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      <Text size="xs" c="dimmed" mt="xs">
        {quotas.monthlyResetDate ? `The month's runs count again from ${new Date(quotas.monthlyResetDate).toLocaleString()}. ` : ""}
        Administrators set a team's quotas.
      </Text>
    </>
  );
}
