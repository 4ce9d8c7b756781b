import { QueryClient } from "@tanstack/react-query";
import { ApiError } from "./api/errors";

// A client's mistake (4xx) is not retried: it will be answered the same; the rest are,
// twice, as a dependency coming back often answers the next time.
export function newQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (failures, e) => failures < 2 && !(e instanceof ApiError && e.status >= 400 && e.status < 500),
        refetchOnWindowFocus: false,
      },
    },
  });
}
