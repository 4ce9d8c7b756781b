package app_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/baton-flow/baton/libs/workflowsapi"
)

// BenchmarkCodeHostDelivery measures a signed push delivered to a linked installation
// until its run is submitted and the delivery recorded: the signature over the example's
// raw body, the delivery and installation records (the embedded database), the trigger's
// condition on the payload, and the answer. The runs and workflows services are stand-ins,
// so their share is not in it. It reports the median and 99th percentile per delivery.
func BenchmarkCodeHostDelivery(b *testing.B) {
	h := newHarness(b)
	h.linked(b, exampleInstallation, "ops")
	h.setWorkflows("ops", flow("build", workflowsapi.Condition{Field: "$.repository.full_name", Operation: "equals", Value: "Codertocat/Hello-World"}))
	push := example(b, "push", 0)
	headers := map[string]string{"X-GitHub-Event": "push", "X-Hub-Signature-256": sign(push)}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		code, out := h.deliverAs(b, fmt.Sprintf("bench-%d-%d", i, start.UnixNano()), headers, push)
		took = append(took, time.Since(start))
		if code != http.StatusOK || len(runIDs(out)) != 1 {
			b.Fatalf("delivery %d: %d %v", i, code, out)
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
