package contract

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// EnvLog names a file to which Report appends one line per test binary,
// "<binary> <responses> <streamed> <requests>", so `make test` can add them up.
const EnvLog = "BATON_CONTRACT_LOG"

// Counts are what a Checker has checked.
type Counts struct {
	// Requests is the number of requests checked.
	Requests int64
	// Responses is the number of answers checked in full: status, content type and body.
	Responses int64
	// Streamed is the number of followed streams, checked by status and content type.
	Streamed int64
}

// Counts returns what c has checked so far.
func (c *Checker) Counts() Counts {
	return Counts{Requests: c.requests.Load(), Responses: c.responses.Load(), Streamed: c.streamed.Load()}
}

// Report writes the shared Checker's counts to stdout, as a line such as
// "contract: 412 responses validated against openapi.yaml (3 streams by status and
// content type; 415 requests)", and appends them to the file named by EnvLog when set.
// Call it from TestMain once the tests have run.
func Report() error { return report(os.Stdout) }

func report(w io.Writer) error {
	n := Shared().Counts()
	_, _ = fmt.Fprintf(w, "contract: %d responses validated against openapi.yaml (%d streams by status and content type; %d requests)\n",
		n.Responses, n.Streamed, n.Requests)
	path := os.Getenv(EnvLog)
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("contract: %w", err)
	}
	binary := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
	_, err = fmt.Fprintf(f, "%s %d %d %d\n", binary, n.Responses, n.Streamed, n.Requests)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("contract: %w", err)
	}
	return nil
}
