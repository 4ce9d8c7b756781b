import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter } from "react-router";
import { App } from "./App";
import { prefetchRoute } from "./prefetch";
import { newQueryClient } from "./queryClient";
import { routes } from "./routes";

const root = document.getElementById("root");
if (!root) throw new Error("no #root element");

// The page's reads and code start now, while React renders the shell, and at each navigation
// before the router renders the next page.
const queryClient = newQueryClient();
prefetchRoute(queryClient, routes, window.location);
const router = createBrowserRouter(routes);
let shown = router.state.location;
router.subscribe((state) => {
  if (state.location === shown) return;
  shown = state.location;
  prefetchRoute(queryClient, routes, state.location);
});

createRoot(root).render(
  <StrictMode>
    <App queryClient={queryClient} router={router} />
  </StrictMode>,
);
