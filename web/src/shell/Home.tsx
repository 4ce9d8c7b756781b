import { Center, Loader, Stack, Text, Title } from "@mantine/core";
import { Navigate, useParams } from "react-router";
import { ErrorAlert } from "../api/ErrorAlert";
import { useCurrentTeam, useTeams } from "./teams";

/**
 * Home sends a visitor to the runs of a team: the one in the URL, the one visited last if
 * still theirs, else the first they may see. Without any team it says so.
 */
export function Home() {
  const { team: inURL } = useParams();
  const last = useCurrentTeam();
  const { teams, isPending, error } = useTeams();
  if (inURL) return <Navigate to={`/teams/${encodeURIComponent(inURL)}/runs`} replace />;
  if (isPending)
    return (
      <Center p="xl">
        <Loader aria-label="Loading" />
      </Center>
    );
  if (error) return <ErrorAlert error={error} title="Your teams could not be read" />;
  const team = teams.find((t) => t.name === last)?.name ?? teams[0]?.name;
  if (team) return <Navigate to={`/teams/${encodeURIComponent(team)}/runs`} replace />;
  return (
    <Stack>
      <Title order={1}>No team yet</Title>
      <Text>
        You are not a member of any team. An administrator can add you to one; teams are made with{" "}
        <code>POST /api/v2/team</code> or <code>baton team create</code>.
      </Text>
    </Stack>
  );
}
