import "@mantine/spotlight/styles.css";
import { useComputedColorScheme, useMantineColorScheme } from "@mantine/core";
import { Spotlight, spotlight, type SpotlightActionData } from "@mantine/spotlight";
import { IconArrowsExchange, IconLogout, IconMoon, IconSearch, IconSettings } from "@tabler/icons-react";
import { useEffect } from "react";
import { useNavigate } from "react-router";
import { isAdmin, useProfile } from "../api/profile";
import { adminPages, teamPages } from "../routes";
import { signOut } from "../session/oidc";
import { SHORTCUTS } from "./CommandPalette";
import { useCurrentTeam, useTeams } from "./teams";

/**
 * CommandPaletteDialog is the command palette itself (CommandPalette.tsx loads it at its first
 * use): the team's pages, the other teams, administration, the theme and signing out, found
 * by typing. Each change of opens (a click or a shortcut before it was loaded) opens it.
 */
export default function CommandPaletteDialog({ opens }: { opens: number }) {
  useEffect(() => {
    if (opens > 0) spotlight.open();
  }, [opens]);
  const navigate = useNavigate();
  const team = useCurrentTeam();
  const { teams } = useTeams();
  const profile = useProfile();
  const { setColorScheme } = useMantineColorScheme();
  const scheme = useComputedColorScheme("light");

  const actions: SpotlightActionData[] = [];
  if (team) {
    for (const p of teamPages) {
      if (!p.nav) continue;
      const Icon = p.nav.icon;
      actions.push({
        id: `page:${p.path}`,
        label: p.nav.label,
        description: `${p.nav.label} of ${team}`,
        leftSection: <Icon size={18} aria-hidden />,
        onClick: () => navigate(`/teams/${encodeURIComponent(team)}/${p.path}`),
      });
    }
  }
  if (isAdmin(profile.data)) {
    for (const p of adminPages) {
      if (!p.nav) continue;
      actions.push({
        id: `admin:${p.path}`,
        label: p.nav.label,
        description: "Administration",
        leftSection: <IconSettings size={18} aria-hidden />,
        onClick: () => navigate(`/admin/${p.path}`),
      });
    }
  }
  for (const t of teams) {
    if (t.name === team) continue;
    actions.push({
      id: `team:${t.name}`,
      label: `Switch to ${t.displayName}`,
      description: t.name,
      leftSection: <IconArrowsExchange size={18} aria-hidden />,
      onClick: () => navigate(`/teams/${encodeURIComponent(t.name)}/runs`),
    });
  }
  const next = scheme === "dark" ? "light" : "dark";
  actions.push(
    {
      id: "theme",
      label: `Switch to the ${next} theme`,
      leftSection: <IconMoon size={18} aria-hidden />,
      onClick: () => setColorScheme(next),
    },
    {
      id: "signout",
      label: "Sign out",
      leftSection: <IconLogout size={18} aria-hidden />,
      onClick: () => void signOut(),
    },
  );

  return (
    <Spotlight
      actions={actions}
      shortcut={SHORTCUTS}
      limit={20}
      nothingFound="Nothing found"
      searchProps={{ leftSection: <IconSearch size={18} aria-hidden />, placeholder: "Go to…", "aria-label": "Go to" }}
    />
  );
}
