import { Alert, Center, Loader, Stack, Tabs, Text, Title } from "@mantine/core";
import { useNavigate, useParams } from "react-router";
import { ErrorAlert } from "../../api/ErrorAlert";
import { useProfile } from "../../api/profile";
import { ApproverGroupsPanel } from "./ApproverGroupsPanel";
import { IntegrationsPanel } from "./IntegrationsPanel";
import { MembersPanel } from "./MembersPanel";
import { QuotasPanel } from "./QuotasPanel";
import { TeamParametersPanel } from "./TeamParametersPanel";
import { TokensPanel } from "./TokensPanel";
import { mayManage, useTeam } from "./team";

const tabs = [
  { value: "members", label: "Members" },
  { value: "approvers", label: "Approver groups" },
  { value: "parameters", label: "Parameters" },
  { value: "tokens", label: "Tokens" },
  { value: "quotas", label: "Quotas" },
  { value: "integrations", label: "Integrations" },
] as const;

/** TeamSettingsPage administers one team, a tab per concern; the tab is the URL's last segment. */
export default function TeamSettingsPage() {
  const { team = "", tab } = useParams();
  const navigate = useNavigate();
  const current = tabs.some((t) => t.value === tab) ? (tab as string) : "members";
  const profile = useProfile();
  const data = useTeam(team);
  const manage = mayManage(profile.data, team);
  return (
    <Stack>
      <Title order={1}>Team settings{data.data?.displayName ? `: ${data.data.displayName}` : ""}</Title>
      {!manage && profile.data && (
        <Alert variant="light" color="blue">
          Only the team's owners and administrators change its settings; you can read them.
        </Alert>
      )}
      <Tabs
        value={current}
        onChange={(v) => v && navigate(`/teams/${encodeURIComponent(team)}/settings/${v}`)}
        keepMounted={false}
      >
        <Tabs.List>
          {tabs.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        {data.error ? (
          <ErrorAlert error={data.error} title="The team could not be read" />
        ) : !data.data ? (
          <Center p="xl">
            <Loader aria-label="Loading" />
          </Center>
        ) : (
          <>
            <Tabs.Panel value="members" pt="md">
              <MembersPanel team={data.data} manage={manage} />
            </Tabs.Panel>
            <Tabs.Panel value="approvers" pt="md">
              <ApproverGroupsPanel team={data.data} manage={manage} />
            </Tabs.Panel>
            <Tabs.Panel value="parameters" pt="md">
              <TeamParametersPanel team={data.data} manage={manage} />
            </Tabs.Panel>
            <Tabs.Panel value="tokens" pt="md">
              <Text size="sm" c="dimmed" mb="sm">
                A team token acts as the team, with its permissions, for scripts and CI.
              </Text>
              <TokensPanel type="team" principal={team} />
            </Tabs.Panel>
            <Tabs.Panel value="quotas" pt="md">
              <QuotasPanel quotas={data.data.quotas} />
            </Tabs.Panel>
            <Tabs.Panel value="integrations" pt="md">
              <IntegrationsPanel team={team} />
            </Tabs.Panel>
          </>
        )}
      </Tabs>
    </Stack>
  );
}
