import { Stack, Title } from "@mantine/core";
import { useParams } from "react-router";
import { RunsTable } from "./RunsTable";

/** RunsPage lists the team's runs, newest first. */
export default function RunsPage() {
  const { team = "" } = useParams();
  return (
    <Stack>
      <Title order={1}>Runs</Title>
      <RunsTable team={team} />
    </Stack>
  );
}
