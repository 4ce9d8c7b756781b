import { Center, Loader } from "@mantine/core";
import { Suspense, type ComponentType, type LazyExoticComponent } from "react";
import { ErrorBoundary } from "./ErrorBoundary";

/** Page renders one lazily loaded page, with a loader while its chunk arrives. */
export function Page({ page: P }: { page: LazyExoticComponent<ComponentType> }) {
  return (
    <ErrorBoundary>
      <Suspense
        fallback={
          <Center p="xl">
            <Loader aria-label="Loading" />
          </Center>
        }
      >
        <P />
      </Suspense>
    </ErrorBoundary>
  );
}
