package standalone_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/baton-flow/baton/gateway/internal/cli"
	"github.com/baton-flow/baton/gateway/internal/cli/config"
)

// BenchmarkEngineCLIRunList times `baton run list` over a team of 1,000 runs, as a user
// at a shell does: the command's whole execution (its context read, the requests, the
// table written), in process, against a standalone instance through the gateway. The
// default page (the newest 50) and every run (--limit 0) are timed apart.
func BenchmarkEngineCLIRunList(b *testing.B) {
	r := newRig(b, nil)
	r.workflow(b, chain("chain3", 3, inlineTask), 30*time.Second)
	const runs = 1000
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for range runs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_, err := r.submit(context.Background(), "chain3", true)
			require.NoError(b, err)
		})
	}
	wg.Wait()
	vars := map[string]string{config.EnvConfig: filepath.Join(b.TempDir(), "config.yaml"),
		config.EnvServer: r.url, config.EnvToken: r.token, config.EnvTeam: benchTeam}
	list := func(args ...string) time.Duration {
		var out, errOut bytes.Buffer
		began := time.Now()
		code := cli.Main(context.Background(), append([]string{"run", "list"}, args...),
			cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: &out, Stderr: &errOut})
		took := time.Since(began)
		require.Equal(b, 0, code, errOut.String())
		return took
	}
	require.GreaterOrEqual(b, strings.Count(func() string {
		var out bytes.Buffer
		cli.Main(context.Background(), []string{"run", "list", "--limit", "0"},
			cli.Env{Getenv: func(k string) string { return vars[k] }, Stdout: &out, Stderr: &out})
		return out.String()
	}(), "\n"), runs, "every run listed")
	b.ResetTimer()
	var page, all []time.Duration
	for range 20 {
		page = append(page, list())
		all = append(all, list("--limit", "0"))
	}
	b.StopTimer()
	slices.Sort(page)
	slices.Sort(all)
	b.ReportMetric(ms(page[len(page)/2]), "page-p50-ms")
	b.ReportMetric(ms(all[len(all)/2]), "all-p50-ms")
	b.ReportMetric(300, "target-ms")
	b.Logf("baton run list over %d runs, wall, p50 of 20: the newest page %s, every run (--limit 0) %s (target ≤300ms)",
		runs, fmtMS(page[len(page)/2]), fmtMS(all[len(all)/2]))
}
