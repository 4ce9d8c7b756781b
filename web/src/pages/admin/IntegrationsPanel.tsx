import { Badge, Button, Card, Group, Image, SimpleGrid, Stack, Text, TextInput } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, call, type Schemas } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { ConfirmButton } from "./Confirm";

/**
 * IntegrationsPanel shows what is installed and linked for a team (GET /integration), with the
 * API's install links; the code host's installations are linked by id and unlinked here.
 */
export function IntegrationsPanel({ team }: { team: string }) {
  const client = useQueryClient();
  const key = ["integrations", team];
  const list = useQuery({
    queryKey: key,
    queryFn: () => call(api.GET("/api/v2/integration", { params: { query: { team } } })),
  });
  const refresh = () => void client.invalidateQueries({ queryKey: key });
  if (list.error) return <ErrorAlert error={list.error} title="Integrations could not be read" />;
  if (!list.data) return <Text c="dimmed">Loading integrations…</Text>;
  if (list.data.length === 0) return <Text c="dimmed">No integrations are available.</Text>;
  return (
    <SimpleGrid cols={{ base: 1, md: 2 }}>
      {list.data.map((i) => (
        <IntegrationCard key={i.id} team={team} integration={i} onChanged={refresh} />
      ))}
    </SimpleGrid>
  );
}

function IntegrationCard({ team, integration: i, onChanged }: { team: string; integration: Schemas["Integration"]; onChanged: () => void }) {
  const linked = i.status === "linked";
  const installations = i.id === "codehost" && i.ref ? i.ref.split(",").filter(Boolean) : [];
  return (
    <Card withBorder>
      <Stack gap="xs">
        <Group justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            {i.icon && <Image src={i.icon} alt="" w={28} h={28} />}
            <Text fw={600} component="h2" size="lg" m={0}>
              {i.name}
            </Text>
          </Group>
          <Badge color={linked ? "green" : "gray"} variant="dot" tt="none">
            {linked ? "linked" : "not linked"}
          </Badge>
        </Group>
        {i.description && <Text size="sm">{i.description}</Text>}
        {i.instructions && (
          <Text size="sm" c="dimmed">
            {i.instructions}
          </Text>
        )}
        {linked && i.id !== "codehost" && i.ref && (
          <Text size="sm">
            Linked to <code>{i.ref}</code>
          </Text>
        )}
        {installations.map((id) => (
          <Group key={id} justify="space-between">
            <Text size="sm">
              Installation <code>{id}</code>
            </Text>
            <ConfirmButton
              label="Unlink"
              ariaLabel={`Unlink installation ${id}`}
              title={`Unlink installation ${id} from ${team}?`}
              confirm="Unlink"
              onConfirm={() => call(api.POST("/api/v2/integration/codehost/unlink", { body: { installationId: id, team } }))}
              onDone={onChanged}
            >
              Events of its repositories no longer run the team's workflows.
            </ConfirmButton>
          </Group>
        ))}
        {i.link ? (
          <Group>
            <Button component="a" href={i.link} variant="light">
              {linked ? `Install ${i.name} again` : `Install ${i.name}`}
            </Button>
          </Group>
        ) : (
          !linked && (
            <Text size="xs" c="dimmed">
              No install link: the integration is not configured on this instance (see the administration's settings), or you do not own the team.
            </Text>
          )
        )}
        {i.id === "codehost" && <LinkInstallation team={team} onLinked={onChanged} />}
      </Stack>
    </Card>
  );
}

/** LinkInstallation links an installation made before the install flow, by its id. */
function LinkInstallation({ team, onLinked }: { team: string; onLinked: () => void }) {
  const [id, setId] = useState("");
  const link = useMutation({
    mutationFn: () => call(api.POST("/api/v2/integration/codehost/link", { body: { installationId: id.trim(), team } })),
    onSuccess: () => {
      setId("");
      onLinked();
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        link.mutate();
      }}
    >
      <Group align="end">
        <TextInput
          label="Link an existing installation"
          placeholder="Installation id"
          value={id}
          onChange={(e) => setId(e.currentTarget.value)}
          inputMode="numeric"
        />
        <Button type="submit" variant="default" loading={link.isPending} disabled={!/^[0-9]+$/.test(id.trim())}>
          Link
        </Button>
      </Group>
      {link.error && <ErrorAlert error={link.error} title="Not linked" />}
    </form>
  );
}
