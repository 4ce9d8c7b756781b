import { Anchor, Stack, Text, Title } from "@mantine/core";
import { Link, useLocation } from "react-router";

/** NotFoundPage answers a path the UI has no page for. */
export default function NotFoundPage() {
  const { pathname } = useLocation();
  return (
    <Stack>
      <Title order={1}>Page not found</Title>
      <Text>
        There is no page at <code>{pathname}</code>.
      </Text>
      <Anchor component={Link} to="/">
        Go to your team&apos;s runs
      </Anchor>
    </Stack>
  );
}
