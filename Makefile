# Baton: `make run` starts everything in one process; `make test` runs every test.
SHELL := /bin/bash
GO ?= go

TOOLS_BIN := $(CURDIR)/.tools/bin
CONSUL    := $(TOOLS_BIN)/consul
# `go test ./...` does not work at a go.work root: name every module's packages instead.
PKGS       = $(shell $(GO) list -m -f '{{.Path}}/...')
TEST_FLAGS ?= -count=1 -timeout 18m

.PHONY: run build test test-integration lint bench tools up down clean web web-check web-e2e

## run: start the gateway and every service in one process, on SQLite files of their own and an embedded Kafka
run:
	$(GO) run ./gateway/cmd/baton server

## build: build every binary into bin/
build:
	@mkdir -p bin
	$(GO) build -o bin/ ./gateway/cmd/... $(foreach s,$(wildcard services/*),./$(s)/cmd/...)

# Each test binary that checks its exchanges against the OpenAPI document adds a line
# "<binary> <responses> <streams> <requests>" here (gateway/internal/contract).
CONTRACT_LOG := $(CURDIR)/.tools/contract.log

## test: lint, then every test of every module (builds the tools first when missing), then
## the crash test alone: 200 runs while the engine's processes are killed and restarted;
## then the schedules kill tests alone: two schedules replicas on MongoDB, then one on its
## SQLite file, killed and restarted for two minutes while schedules fire every second, each
## planned fire made once;
## then the web UI's browser tests alone (web-e2e);
## last, how many answers the tests checked against the OpenAPI document
test: tools lint web-check
	@mkdir -p $(dir $(CONTRACT_LOG)) && rm -f $(CONTRACT_LOG)
	$(MAKE) --no-print-directory alerts-check
	BATON_CONTRACT_LOG=$(CONTRACT_LOG) BATON_CONSUL_BIN=$(CONSUL) $(GO) test $(TEST_FLAGS) $(PKGS)
	$(MAKE) --no-print-directory web-e2e
	BATON_CONTRACT_LOG=$(CONTRACT_LOG) BATON_CRASH_TEST=1 $(GO) test $(TEST_FLAGS) -timeout 40m -run '^TestCrashSafety(Alone)?$$' -v ./gateway/internal/crashtest/
	BATON_SCHEDULE_KILL_TEST=1 $(GO) test $(TEST_FLAGS) -run '^TestSchedulesUnderKills(SQLite)?$$' -v ./services/schedules/internal/killtest/
	@awk '{r += $$2; s += $$3; q += $$4} END {printf "contract: %d responses validated against openapi.yaml (%d streams by status and content type; %d requests) by %d test binaries\n", r, s, q, NR}' $(CONTRACT_LOG)

## test-integration: the end-to-end tests only (gateway → services → Mongo → Kafka)
test-integration: tools
	BATON_CONSUL_BIN=$(CONSUL) $(GO) test $(TEST_FLAGS) -run 'Integration' $(PKGS)

# Core packages, which must not import Fiber, the Mongo driver, kafka-go or SQLite, not even
# transitively: each service's domain and app (use cases), the runs engine, and the
# contracts in libs they build on. Extended regular expressions over import paths, one
# word each; the libs ones are anchored so that their adapters (auth/fiberauth,
# outbox/mongorelay) stay out. Each must match at least one package, so a rename cannot
# silently take a package out of the rule.
LINT_CORE := /internal/domain /internal/app /internal/engine /libs/auth$$ /libs/outbox$$ /libs/events$$
LINT_ADAPTERS     := gofiber/fiber|mongo-driver|segmentio/kafka-go|modernc.org/sqlite

empty :=
space := $(empty) $(empty)
# any_of joins regular expressions into one alternation; an empty list matches nothing.
any_of = $(if $(strip $(1)),$(subst $(space),|,$(strip $(1))),^$$.)

## lint: gofmt, go vet, and core packages (LINT_CORE) free of Fiber, Mongo, Kafka and SQLite
lint:
	@out=$$(gofmt -l gateway libs services deploy); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	@all=$$($(GO) list $(PKGS)) || exit 1; \
	for re in $(foreach p,$(LINT_CORE),'$(p)'); do \
		grep -qE "$$re" <<<"$$all" || { echo "lint: no package matches core pattern $$re"; exit 1; }; \
	done; \
	core=$$(grep -E '$(call any_of,$(LINT_CORE))' <<<"$$all"); \
	bad=$$($(GO) list -f '{{.ImportPath}}: {{join .Deps " "}}' $$core | grep -E '$(LINT_ADAPTERS)' | cut -d: -f1); \
	if [ -n "$$bad" ]; then echo "core packages must not import Fiber, Mongo, Kafka or SQLite:"; echo "$$bad"; exit 1; fi

## bench: benchmarks, printing their numbers; then the engine's speed table end to end
## (gateway/internal/standalone/engine_bench_test.go), each benchmark a fixed workload on
## its own standalone process, one after another
bench:
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkEngine' -benchmem $(PKGS)
	$(GO) test -run '^$$' -bench '^BenchmarkEngine' -benchtime 1x -timeout 30m ./gateway/internal/standalone/

## tools: a Consul agent built from its Go module, for tests (into .tools/bin), and the
## commands the documentation's examples call (curl, jq; gateway/internal/doctest runs
## them), installed from Debian's packages when missing
tools: $(CONSUL) example-tools prometheus-tools

EXAMPLE_TOOLS := curl jq
# apt-get needs root: sudo when make runs as another user.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

# Prometheus and promtool (Debian's `prometheus` package): promtool checks the alert rules,
# and gateway/internal/standalone/prometheus_test.go runs every dashboard's queries and the
# rules in a real Prometheus. make sets BATON_PROMETHEUS_TEST, so that test fails rather
# than skips when the binary is missing.
export BATON_PROMETHEUS_TEST := 1

.PHONY: prometheus-tools alerts-check test-dashboards
prometheus-tools:
	@if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then \
		echo "installing prometheus from Debian's packages"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends prometheus; \
	fi

## alerts-check: the alert rules (deploy/prometheus/alerts.yml) checked and unit-tested by promtool
alerts-check: prometheus-tools
	promtool check rules deploy/prometheus/alerts.yml
	promtool test rules deploy/prometheus/alerts_test.yml

## test-dashboards: every dashboard panel's query and every alert rule run in a real Prometheus
## scraping a standalone Baton under a small workload (also run by `make test`)
test-dashboards: alerts-check
	$(GO) test $(TEST_FLAGS) -run '^TestIntegrationDashboardsAndAlerts$$' -v ./gateway/internal/standalone/

.PHONY: example-tools
example-tools:
	@missing=$$(for c in $(EXAMPLE_TOOLS); do command -v $$c >/dev/null || echo $$c; done); \
	if [ -n "$$missing" ]; then \
		echo "installing $$missing from Debian's packages"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(CONSUL): libs/testkit/consulagent/go.mod
	@mkdir -p $(TOOLS_BIN)
	cd libs/testkit/consulagent && GOWORK=off GOFLAGS=-mod=mod GONOSUMDB=github.com/hashicorp/consul-awsauth \
		$(GO) build -o $(CONSUL) github.com/hashicorp/consul

# The UI's packages, installed exactly as package-lock.json says when it changes (npm ci
# needs Node.js 20.19 or later and reaches only the npm registry).
WEB_DEPS := web/node_modules/.package-lock.json

## web: rebuild the web UI (web/) into gateway/internal/webui/dist, which is committed so
## that the gateway embeds it with nothing but Go; run it after changing web/ and commit dist
web: $(WEB_DEPS)
	cd web && npm run build

## web-check: the UI's type check and component tests (Vitest), then a build into a
## temporary directory that must equal the committed gateway/internal/webui/dist
web-check: $(WEB_DEPS)
	cd web && npm run --silent typecheck && npx vitest run --reporter=dot
	@out=$$(mktemp -d) && trap 'rm -rf "$$out"' EXIT && \
	(cd web && BATON_WEB_OUT="$$out" npx vite build --logLevel warn) && \
	if ! diff -r "$$out" gateway/internal/webui/dist >/dev/null; then \
		echo "gateway/internal/webui/dist is not the build of web/: run make web and commit it"; \
		diff -rq "$$out" gateway/internal/webui/dist | sed 's|'"$$out"'|<build>|'; exit 1; \
	fi

## web-e2e: the UI's browser tests (web/e2e, Playwright in Debian's Chromium) against a
## fresh standalone instance (and one with a test OpenID Connect issuer for e2e/oidc.spec.ts),
## screenshots of every step in web/e2e/artifacts
web-e2e: $(WEB_DEPS) chromium
	BATON_WEB_TEST=1 $(GO) test $(TEST_FLAGS) -run '^TestBrowser(OIDC)?$$' ./gateway/internal/webtest/

$(WEB_DEPS): web/package-lock.json
	@command -v npm >/dev/null || { echo "the web UI's checks need Node.js 20.19+ and npm"; exit 1; }
	cd web && npm ci --no-audit --no-fund --prefer-offline
	@touch $@

.PHONY: chromium
chromium:
	@if [ ! -x /usr/bin/chromium ]; then \
		echo "installing chromium from Debian's packages"; \
		$(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends chromium; \
	fi

# The distributed mode's binaries (gateway, every service, and the cluster command that
# supervises them and serves the store and the broker), and its run directory.
CLUSTER_BIN  := $(CURDIR)/bin/cluster
CLUSTER_DIR  ?= $(CLUSTER_BIN)/run
CLUSTER_ADDR ?= 127.0.0.1:8080

.PHONY: cluster cluster-bin
cluster-bin:
	@mkdir -p $(CLUSTER_BIN)
	$(GO) build -o $(CLUSTER_BIN)/ ./gateway/cmd/gateway ./gateway/cmd/cluster $(foreach s,$(wildcard services/*),./$(s)/cmd/...)

## cluster: the distributed mode on this machine, every service its own process from its own
## binary (two replicas each of runs, runner, schedules and integrations), with a Consul agent,
## a Mongo-wire store and a Kafka-protocol broker each a process of its own; prints where each
## listens and the admin token, logs to $(CLUSTER_DIR)/logs; Ctrl-C stops it all
## (docs/operations.md, "Running the distributed mode locally")
cluster: $(CONSUL) cluster-bin
	$(CLUSTER_BIN)/cluster up -consul $(CONSUL) -dir $(CLUSTER_DIR) -addr $(CLUSTER_ADDR)

CHAOS_FOR ?= 5m
# CHAOS_TEST_FOR is how long the short chaos run (chaos-test) kills processes.
CHAOS_TEST_FOR ?= 40s
## chaos-test: the short chaos run: the distributed mode's binaries built (cluster-bin), a
## cluster of them with two gateways, and CHAOS_TEST_FOR of kills under the chaos workload,
## every check of `make chaos` made (docs/operations.md, "Chaos"); not yet part of make test
.PHONY: chaos-test
chaos-test: $(CONSUL) cluster-bin
	BATON_CLUSTER_CHAOS_TEST=1 BATON_CLUSTER_BIN=$(CLUSTER_BIN) BATON_CONSUL_BIN=$(CONSUL) BATON_CLUSTER_CHAOS_FOR=$(CHAOS_TEST_FOR) \
		$(GO) test $(TEST_FLAGS) -run '^TestChaos$$' -v ./gateway/internal/cluster/

.PHONY: chaos
## chaos: on such a cluster (two gateways, a new run directory under bin/cluster), a mixed
## workload (chains, fan-outs, approvals, callbacks, locks, child runs, a schedule firing
## every second, inbound CloudEvents, status events to a sink) for CHAOS_FOR (default 5m)
## while random gateways and service replicas are SIGKILLed and restarted; then checks every
## run, task, fire, decision, lock and event, prints the counts and fails with what broke
chaos: $(CONSUL) cluster-bin
	$(CLUSTER_BIN)/cluster chaos -consul $(CONSUL) -for $(CHAOS_FOR)

## up / down: the distributed deployment with Docker Compose
up:
	docker compose up -d --build
down:
	docker compose down

clean:
	rm -rf bin .tools
