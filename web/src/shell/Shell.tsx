import {
  ActionIcon,
  AppShell,
  Badge,
  Burger,
  Button,
  Group,
  NavLink,
  Select,
  Text,
  Tooltip,
  useComputedColorScheme,
  useMantineColorScheme,
} from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import { IconLogout, IconMoon, IconSettings, IconSun } from "@tabler/icons-react";
import { useQuery } from "@tanstack/react-query";
import { Link, NavLink as RouterNavLink, Outlet, useLocation, useNavigate } from "react-router";
import { api, call } from "../api/client";
import { ErrorAlert } from "../api/ErrorAlert";
import { isAdmin, useProfile } from "../api/profile";
import { adminPages, teamPages } from "../routes";
import { signOut } from "../session/oidc";
import { CommandPalette } from "./CommandPalette";
import { useCurrentTeam, useTeams } from "./teams";

/** Shell is the frame of every signed-in page: header, navigation bar and the page. */
export function Shell() {
  const [opened, { toggle, close }] = useDisclosure();
  const profile = useProfile();
  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 220, breakpoint: "sm", collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Header opened={opened} toggle={toggle} />
      </AppShell.Header>
      <AppShell.Navbar p="xs" aria-label="Main">
        <Navigation onNavigate={close} />
      </AppShell.Navbar>
      <AppShell.Main>
        {profile.error ? <ErrorAlert error={profile.error} title="Your profile could not be read" /> : <Outlet />}
      </AppShell.Main>
    </AppShell>
  );
}

function Header({ opened, toggle }: { opened: boolean; toggle: () => void }) {
  const profile = useProfile();
  const name = profile.data?.displayName || profile.data?.name || profile.data?.email;
  const email = profile.data?.email;
  return (
    <Group h="100%" px="md" justify="space-between" wrap="nowrap">
      <Group gap="sm" wrap="nowrap">
        <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
        <Text component={Link} to="/" fw={700} size="lg" td="none" c="inherit">
          Baton
        </Text>
        <TeamSwitcher />
      </Group>
      <Group gap="xs" wrap="nowrap">
        <CommandPalette />
        <ThemeToggle />
        {name && (
          <Text size="sm" visibleFrom="sm" data-testid="identity">
            {name}
            {email && email !== name && (
              <Text span size="xs">
                {" "}
                &lt;{email}&gt;
              </Text>
            )}
            {profile.data?.principalType && profile.data.principalType !== "user" && (
              <Text span c="dimmed" size="xs">
                {" "}
                ({profile.data.principalType})
              </Text>
            )}
          </Text>
        )}
        <Tooltip label="Sign out">
          <ActionIcon
            variant="subtle"
            size="lg"
            aria-label="Sign out"
            onClick={() => void signOut()}
          >
            <IconLogout size={20} aria-hidden />
          </ActionIcon>
        </Tooltip>
      </Group>
    </Group>
  );
}

function ThemeToggle() {
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme("light");
  const next = scheme === "dark" ? "light" : "dark";
  return (
    <Tooltip label={`Switch to the ${next} theme`}>
      <ActionIcon variant="subtle" size="lg" aria-label={`Switch to the ${next} theme`} onClick={() => setColorScheme(next)}>
        {scheme === "dark" ? <IconSun size={20} aria-hidden /> : <IconMoon size={20} aria-hidden />}
      </ActionIcon>
    </Tooltip>
  );
}

/** TeamSwitcher changes the team of the page, keeping its area (runs stay runs). */
function TeamSwitcher() {
  const { teams } = useTeams();
  const current = useCurrentTeam();
  const location = useLocation();
  const navigate = useNavigate();
  const data = teams.map((t) => ({ value: t.name, label: t.displayName }));
  if (current && !teams.some((t) => t.name === current)) data.unshift({ value: current, label: current });
  if (data.length === 0) return null;
  return (
    <Select
        aria-label="Team"
        data={data}
        value={current ?? null}
        placeholder="Choose a team"
        searchable={data.length > 8}
        allowDeselect={false}
        w={{ base: 140, sm: 220 }}
        size="sm"
        comboboxProps={{ withinPortal: true }}
        onChange={(team) => {
          if (!team) return;
          const area = location.pathname.match(/^\/teams\/[^/]+\/([^/]+)/)?.[1] ?? "runs";
          navigate(`/teams/${encodeURIComponent(team)}/${area}`);
        }}
      />
  );
}

function Navigation({ onNavigate }: { onNavigate: () => void }) {
  const team = useCurrentTeam();
  const profile = useProfile();
  const firstAdmin = adminPages.find((p) => p.nav);
  return (
    <nav aria-label="Sections">
      {team &&
        teamPages
          .filter((p) => p.nav)
          .map((p) => {
            const nav = p.nav!;
            const Icon = nav.icon;
            return (
              <NavLink
                key={p.path}
                component={RouterNavLink}
                to={`/teams/${encodeURIComponent(team)}/${p.path}`}
                label={nav.label}
                leftSection={<Icon size={18} aria-hidden />}
                rightSection={nav.pendingActions ? <PendingActions team={team} /> : undefined}
                onClick={onNavigate}
              />
            );
          })}
      {isAdmin(profile.data) && firstAdmin && (
        <NavLink
          component={RouterNavLink}
          to={`/admin/${firstAdmin.path}`}
          label="Administration"
          leftSection={<IconSettings size={18} aria-hidden />}
          onClick={onNavigate}
        />
      )}
      {!team && (
        <Button component={Link} to="/" variant="subtle" size="xs">
          Choose a team
        </Button>
      )}
    </nav>
  );
}

/** PendingActions is the count of the team's actions waiting for someone (approvals and manual). */
function PendingActions({ team }: { team: string }) {
  const summary = useQuery({
    queryKey: ["actions", team, "summary"],
    queryFn: () => call(api.GET("/api/v2/team/{team}/action/summary", { params: { path: { team } } })),
    refetchInterval: 30_000,
  });
  const n = (summary.data?.approvals ?? 0) + (summary.data?.manual ?? 0);
  if (!summary.data || n === 0) return null;
  return (
    <Badge size="sm" circle={n < 10} aria-label={`${n} pending`}>
      {n}
    </Badge>
  );
}
