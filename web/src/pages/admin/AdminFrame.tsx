import { Alert, Center, Loader, Stack, Tabs, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { useLocation, useNavigate } from "react-router";
import { isAdmin, useProfile } from "../../api/profile";

/** The administration's sections, each a page under /admin/. */
export const adminSections = [
  { path: "teams", label: "Teams" },
  { path: "parameters", label: "Global parameters" },
  { path: "tokens", label: "Global tokens" },
  { path: "settings", label: "Settings" },
] as const;

/**
 * AdminFrame is the frame of the administration's pages: their tabs, and a refusal in words
 * for a principal without a global grant (the API would answer 403 to each call anyway).
 */
export function AdminFrame({ title, children }: { title: string; children: ReactNode }) {
  const profile = useProfile();
  const navigate = useNavigate();
  const location = useLocation();
  const current = adminSections.find((s) => location.pathname.startsWith(`/admin/${s.path}`))?.path ?? null;
  return (
    <Stack>
      <Title order={1}>{title}</Title>
      <Tabs value={current} onChange={(v) => v && navigate(`/admin/${v}`)}>
        <Tabs.List aria-label="Administration">
          {adminSections.map((s) => (
            <Tabs.Tab key={s.path} value={s.path}>
              {s.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      {profile.isPending ? (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      ) : !isAdmin(profile.data) ? (
        <Alert color="blue" variant="light">
          <Text fw={700} size="sm">
            Administrators only
          </Text>
          <Text size="sm">The instance's administration needs a global grant, which you do not hold.</Text>
        </Alert>
      ) : (
        children
      )}
    </Stack>
  );
}
