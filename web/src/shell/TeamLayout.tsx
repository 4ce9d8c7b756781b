import { useEffect } from "react";
import { Outlet, useParams } from "react-router";
import { rememberTeam } from "./teams";

/** TeamLayout holds the pages of one team; the team visited last is where the next visit starts. */
export function TeamLayout() {
  const { team } = useParams();
  useEffect(() => {
    if (team) rememberTeam(team);
  }, [team]);
  return <Outlet />;
}
