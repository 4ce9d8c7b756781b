// Package webtest runs the web UI's end-to-end tests (web/e2e/*.spec.ts, Playwright in
// Debian's Chromium) against a fresh standalone instance, from `go test`, so that `make test`
// checks the UI as a user sees it. Its test is skipped unless BATON_WEB_TEST=1 (make test
// sets it after installing Chromium and the UI's packages). Screenshots of every step are
// kept in web/e2e/artifacts/<flow>/ (or BATON_E2E_ARTIFACTS).
package webtest
