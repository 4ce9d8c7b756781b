import type { ReactNode } from "react";
import { Navigate, useLocation } from "react-router";
import { useToken } from "../session/session";

/** RequireSignIn sends a visitor without a token to /signin, to come back here after. */
export function RequireSignIn({ children }: { children: ReactNode }) {
  const token = useToken();
  const location = useLocation();
  if (token === null) {
    const next = location.pathname + location.search + location.hash;
    const to = next === "/" ? "/signin" : `/signin?next=${encodeURIComponent(next)}`;
    return <Navigate to={to} replace />;
  }
  return children;
}
