import { ActionIcon, Alert, Button, CopyButton, Group, Modal, Stack, Text, TextInput, Tooltip } from "@mantine/core";
import { IconCheck, IconCopy } from "@tabler/icons-react";

/**
 * SecretOnce shows a new token's secret, the only time the API answers it, in a read-only
 * field with a copy button; closing it forgets the secret.
 */
export function SecretOnce({ secret, name, onClose }: { secret: string | null; name: string; onClose: () => void }) {
  return (
    <Modal opened={secret !== null} onClose={onClose} closeButtonProps={{ "aria-label": "Close" }} title={`Token ${name} created`} closeOnClickOutside={false} size="lg">
      <Stack>
        <Alert color="blue" variant="light">
          <Text fw={700} size="sm">
            Copy it now
          </Text>
          <Text size="sm">This is the token's secret. You will not see it again: Baton keeps only its hash.</Text>
        </Alert>
        <Group gap="xs" wrap="nowrap" align="end">
          <TextInput
            label="Secret"
            value={secret ?? ""}
            readOnly
            style={{ flex: 1 }}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
            onFocus={(e) => e.currentTarget.select()}
            data-testid="token-secret"
          />
          <CopyButton value={secret ?? ""}>
            {({ copied, copy }) => (
              <Tooltip label={copied ? "Copied" : "Copy"}>
                <ActionIcon size="lg" variant="light" color={copied ? "teal" : undefined} onClick={copy} aria-label="Copy the secret">
                  {copied ? <IconCheck size={18} aria-hidden /> : <IconCopy size={18} aria-hidden />}
                </ActionIcon>
              </Tooltip>
            )}
          </CopyButton>
        </Group>
        <Text size="xs" c="dimmed">
          Send it as <code>Authorization: Bearer &lt;secret&gt;</code>.
        </Text>
        <Group justify="flex-end">
          <Button onClick={onClose}>I have copied it</Button>
        </Group>
      </Stack>
    </Modal>
  );
}
