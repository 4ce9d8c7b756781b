// Two versions of a workflow side by side, as YAML, their differences marked
// (CodeMirror's merge view). ?from= and ?to= name the versions.
import { Anchor, Center, Group, Loader, Select, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { Suspense, lazy } from "react";
import { Link, useParams, useSearchParams } from "react-router";
import { ErrorAlert, api, call } from "../../api";
import { clean } from "./model";
import { toYaml } from "./yaml";

const YamlDiff = lazy(() => import("./YamlDiff"));

export default function DiffPage() {
  const { team = "", name = "" } = useParams();
  const [search, setSearch] = useSearchParams();
  const from = search.get("from") ?? "";
  const to = search.get("to") ?? "";
  const base = `/teams/${encodeURIComponent(team)}/workflows/${encodeURIComponent(name)}`;
  const changelog = useQuery({
    queryKey: ["workflow-changelog", team, name],
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflow/{name}/changelog", { params: { path: { team, name } } })),
  });
  const read = (v: string) => ({
    queryKey: ["workflow", team, name, v],
    queryFn: () => call(api.GET("/api/v2/team/{team}/workflow/{name}", { params: { path: { team, name }, query: { version: Number(v) } } })),
    enabled: /^\d+$/.test(v),
    staleTime: Infinity,
  });
  const a = useQuery(read(from));
  const b = useQuery(read(to));
  const versions = (changelog.data ?? []).map((e) => ({ value: String(e.version), label: `Version ${e.version}${e.reason ? ` — ${e.reason}` : ""}` }));
  const pick = (k: string, v: string | null) =>
    setSearch(
      (s) => {
        const n = new URLSearchParams(s);
        if (v) n.set(k, v);
        return n;
      },
      { replace: true },
    );

  return (
    <Stack>
      <Group gap="xs">
        <Anchor component={Link} to={`/teams/${encodeURIComponent(team)}/workflows`} size="sm">
          Workflows
        </Anchor>
        <Text size="sm" aria-hidden>
          /
        </Text>
        <Anchor component={Link} to={base} size="sm">
          {name}
        </Anchor>
        <Text size="sm" aria-hidden>
          /
        </Text>
        <Anchor component={Link} to={`${base}/versions`} size="sm">
          History
        </Anchor>
      </Group>
      <Title order={1}>
        {name}: version {from || "?"} against version {to || "?"}
      </Title>
      <Group grow>
        <Select label="From" data={versions} value={from || null} onChange={(v) => pick("from", v)} />
        <Select label="To" data={versions} value={to || null} onChange={(v) => pick("to", v)} />
      </Group>
      {changelog.error && <ErrorAlert error={changelog.error} title="The history could not be read" />}
      {a.error && <ErrorAlert error={a.error} title={`Version ${from} could not be read`} />}
      {b.error && <ErrorAlert error={b.error} title={`Version ${to} could not be read`} />}
      {!from || !to ? (
        <Text>Choose two versions.</Text>
      ) : a.isPending || b.isPending ? (
        <Center>
          <Loader aria-label="Loading" />
        </Center>
      ) : a.data && b.data ? (
        <Suspense
          fallback={
            <Center>
              <Loader aria-label="Loading" />
            </Center>
          }
        >
          <YamlDiff from={toYaml(clean(a.data))} to={toYaml(clean(b.data))} />
        </Suspense>
      ) : null}
    </Stack>
  );
}
