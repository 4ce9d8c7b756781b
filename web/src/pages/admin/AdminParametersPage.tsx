import { Center, Loader, Text } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call } from "../../api/client";
import { ErrorAlert } from "../../api/ErrorAlert";
import { AdminFrame } from "./AdminFrame";
import { ParametersPanel, type Param } from "./ParametersPanel";

/** AdminParametersPage is the instance's global parameters, read by every run as $(global.params.<name>). */
export default function AdminParametersPage() {
  const client = useQueryClient();
  const params = useQuery({ queryKey: ["parameters", "global"], queryFn: () => call(api.GET("/api/v2/parameters")) });
  return (
    <AdminFrame title="Global parameters">
      <Text size="sm" c="dimmed">
        Every run reads them as <code>$(global.params.&lt;name&gt;)</code>
      </Text>
      {params.error ? (
        <ErrorAlert error={params.error} title="The parameters could not be read" />
      ) : !params.data ? (
        <Center p="xl">
          <Loader aria-label="Loading" />
        </Center>
      ) : (
        <ParametersPanel
          params={params.data as Param[]}
          canEdit
          owner="the instance"
          save={(p) => call(api.PUT("/api/v2/parameters", { body: p }))}
          remove={(name) => call(api.DELETE("/api/v2/parameters/{name}", { params: { path: { name } } }))}
          onChanged={() => void client.invalidateQueries({ queryKey: ["parameters", "global"] })}
        />
      )}
    </AdminFrame>
  );
}
