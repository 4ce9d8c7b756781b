import { Button, Group, Modal, Stack, Text, type ButtonProps } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { useMutation } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { ErrorAlert } from "../../api/ErrorAlert";

interface ConfirmProps extends ButtonProps {
  /** The button's words, e.g. "Delete". */
  label: string;
  /** Its accessible name when the label alone is ambiguous in a list, e.g. "Delete team ops". */
  ariaLabel?: string;
  title: string;
  children: ReactNode;
  /** The confirming button's words. */
  confirm: string;
  onConfirm: () => Promise<unknown>;
  onDone?: () => void;
}

/**
 * ConfirmButton guards a destructive action: the button asks in a dialog first, runs the
 * action on confirmation, and keeps the dialog open with the API's error when it fails.
 */
export function ConfirmButton({ label, ariaLabel, title, children, confirm, onConfirm, onDone, ...button }: ConfirmProps) {
  const [opened, { open, close }] = useDisclosure(false);
  const [key, setKey] = useState(0);
  const action = useMutation({
    mutationFn: onConfirm,
    onSuccess: () => {
      close();
      onDone?.();
    },
  });
  return (
    <>
      <Button
        color="red"
        variant="subtle"
        size="xs"
        aria-label={ariaLabel}
        {...button}
        onClick={() => {
          action.reset();
          setKey((k) => k + 1);
          open();
        }}
      >
        {label}
      </Button>
      <Modal opened={opened} onClose={close} closeButtonProps={{ "aria-label": "Close" }} title={title} key={key}>
        <Stack>
          <Text size="sm" component="div">
            {children}
          </Text>
          {action.error && <ErrorAlert error={action.error} />}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={action.isPending} onClick={() => action.mutate()}>
              {confirm}
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  );
}
