import { Text } from "@mantine/core";
import { AdminFrame } from "./AdminFrame";
import { TokensPanel } from "./TokensPanel";

/** AdminTokensPage is the instance's global tokens: they act across teams, with their permissions. */
export default function AdminTokensPage() {
  return (
    <AdminFrame title="Global tokens">
      <Text size="sm" c="dimmed">
        A global token acts on the whole instance with its permissions; a team's tokens are in its settings.
      </Text>
      <TokensPanel type="global" />
    </AdminFrame>
  );
}
