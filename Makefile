# timebucket — the two commands a newcomer needs:
#   make run    bring up the local stack, migrate, apply topics, run all roles on a demo workload
#   make test   install everything, start the stack, run unit + integration tests, stop the stack
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
export TB_ROOT := $(CURDIR)
STACK := bash stack/stack.sh
ENV := set -a && source stack/env.sh && set +a
# The three-node stack of the cluster tests: its own home and ports (stack/cluster.env).
CLUSTER := source stack/cluster.env
REPORTS := .stack/reports

.PHONY: help install node-deps stack-install bench-stack build lint format format-check typecheck check test-unit test-deploy test-integration test-cluster test-mysql test \
        stack-up stack-down stack-status stack-clean cluster-up cluster-down migrate topics-apply schemas-register run bench-poison-storm bench-scanner bench-scheduled-ahead bench-outbox-purge bench-reminders bench-announced bench bench-smoke

help:
	@echo "make run           stack up, migrate, apply topics, run every role with a demo workload (Ctrl-C stops; make stack-down stops the stack)"
	@echo "make test          install, stack up, unit + integration tests, stack down"
	@echo "make stack-up | stack-down | stack-status | stack-clean | cluster-up | cluster-down | migrate | check | format"

# npm ci only when the lock file changed since the last install.
node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

node-deps: node_modules/.installed

stack-install:
	bash stack/install.sh

install: node-deps stack-install

# dist/ is rebuilt only when a source changed: test-all.sh's concurrent steps all depend on it,
# and a second compile would rewrite dist/ under the stack and the tests running from it.
dist/.built: node_modules/.installed tsconfig.json tsconfig.build.json $(shell find src -type f)
	npx tsc -p tsconfig.build.json
	@touch $@

build: dist/.built

lint: node-deps
	npx eslint .

typecheck: node-deps
	npx tsc -p tsconfig.json --noEmit

# The formatter (prettier, .prettierrc.json) over the code; `make format` rewrites it.
PRETTIER_FILES := "src/**/*.ts" "test/**/*.{ts,js}" "bench/**/*.ts" "*.mjs" "*.js"
format-check: node-deps
	npx prettier --check --log-level warn $(PRETTIER_FILES)

format: node-deps
	npx prettier --write --log-level warn $(PRETTIER_FILES)

check: format-check lint typecheck test-unit

test-unit: node-deps
	@mkdir -p $(REPORTS)
	npx jest --selectProjects unit --json --outputFile=$(REPORTS)/unit.json

# The Dockerfile, the kustomize base and overlay, the alert rules: offline, with the tools
# stack/install.sh unpacks (promtool, kubectl); the CLI checks run the built dist/.
test-deploy: build stack-install
	@mkdir -p $(REPORTS)
	$(ENV) && npx jest --selectProjects deploy --json --outputFile=$(REPORTS)/deploy.json

# The crash test runs the CLI from dist/ as a separate process, hence build first.
# In lanes (test/support/run-lanes.js): the files on the captured database one at a time, beside
# them the files on databases of their own, then alone the files that stop part of the stack.
# Each lane is a jest process (--runInBand --forceExit) with its report, integration-<lane>.json.
test-integration: build
	@mkdir -p $(REPORTS)
	$(ENV) && node test/support/run-lanes.js integration $(REPORTS)

# Against the three-node stack (replication factor 3): leader moves, a broker killed.
test-cluster: build
	@mkdir -p $(REPORTS)
	$(CLUSTER) && $(ENV) && TB_TEST_LANE=cluster npx jest --selectProjects cluster --runInBand --forceExit --json --outputFile=$(REPORTS)/cluster.json \
	  || { node test/support/print-failed-logs.js $(REPORTS)/cluster.json; exit 1; }

# The integration files marked @mysql, on the same stack, whose database servers are MySQL 9.7
# (stack/cluster.env): one after the other, their report and logs in $(REPORTS)/mysql.
test-mysql: build
	@mkdir -p $(REPORTS)/mysql
	$(CLUSTER) && $(ENV) && node test/support/run-lanes.js integration $(REPORTS)/mysql --mysql

# stack/test-all.sh: both stacks start while lint, typecheck, the unit and deployment tests run;
# then the integration tests (on the development stack: server 1 MariaDB, server 2 MySQL) and the cluster tests followed
# by the MySQL lane (on the three-node one, MySQL) run side by side; each stack is stopped afterwards even when tests fail (only if the run
# started it). The logs of the pipelines under test are in .stack/reports/logs/<test file>.log.
test: install
	@rm -rf $(REPORTS)
	bash stack/test-all.sh
	@node test/support/print-summary.js $(REPORTS)/unit.json $(REPORTS)/deploy.json $(REPORTS)/integration-*.json $(REPORTS)/cluster.json $(REPORTS)/mysql/integration-*.json

# Benchmark (not a test): P poison CDC records ahead of G good ones; prints one JSON line.
P ?= 400000
G ?= 20000
bench-poison-storm: node-deps stack-up migrate
	npx tsc -p tsconfig.bench.json
	$(ENV) && P=$(P) G=$(G) node dist-bench/bench/poison-storm.js

# Benchmark (not a test): S bucket entries scheduled 20–75 minutes ahead (HOUR_SHARE of them, 0.1,
# 2–24 hours ahead), appended straight to the rings of a topology of the run's own; the resident
# memory of an expirer and a cascader holding them, every second for OBSERVE_S. One JSON line.
S ?= 1000000
OBSERVE_S ?= 60
bench-scheduled-ahead: node-deps stack-up migrate
	npx tsc -p tsconfig.bench.json
	$(ENV) && S=$(S) OBSERVE_S=$(OBSERVE_S) node dist-bench/bench/scheduled-ahead.js

# Benchmark (not a test): the compensation scanner alone catching N overdue coupons (+N/10
# orders) among B rows it must skip; PPS lifts its page rate limit. Prints one JSON line.
N ?= 100000
B ?= 200000
PPS ?= 1000
bench-scanner: build stack-up
	npx tsc -p tsconfig.bench.json
	$(ENV) && N=$(N) B=$(B) PPS=$(PPS) node dist-bench/bench/scanner.js

# Benchmark (not a test): event_outbox's rows deleted in the transaction that writes them, or
# left to retention: binlog bytes and database CPU per event. Prints one JSON line.
BATCH ?= 2000
bench-outbox-purge: build stack-up migrate
	npx tsc -p tsconfig.bench.json
	$(ENV) && N=$(N) BATCH=$(BATCH) node dist-bench/bench/outbox-purge.js

# Benchmark (not a test): how late reminders fire, RATE coupons a second with fire points BEFORE.
#   make bench-reminders [RATE=1000] [RUN_S=60] [LEAD_S=40] [BEFORE=30s,20s,10s]
RATE ?= 1000
RUN_S ?= 60
LEAD_S ?= 40
BEFORE ?= 30s,20s,10s
bench-reminders: build stack-up migrate
	npx tsc -p tsconfig.bench.json
	$(ENV) && RATE=$(RATE) RUN_S=$(RUN_S) LEAD_S=$(LEAD_S) BEFORE=$(BEFORE) node dist-bench/bench/reminders.js

# A hot minute announced ahead: the second expirer started by the forecast vs by the lag (bench/announced-hot-minute.ts).
#   make bench-announced [N=300000] [ANNOUNCE_S=300] [THRESHOLD=N/4] [SCRAPE_S=5] [VARIANTS=forecast,lag]
bench-announced: build stack-up migrate
	npx tsc -p tsconfig.bench.json
	$(ENV) && N=$(if $(filter command line environment,$(origin N)),$(N),300000) ANNOUNCE_S=$(ANNOUNCE_S) THRESHOLD=$(THRESHOLD) SCRAPE_S=$(SCRAPE_S) VARIANTS=$(VARIANTS) node dist-bench/bench/announced-hot-minute.js

# Benchmark (not a test): timebucket side by side with the alternatives (raw SQL limit, the
# naive poller, the compensation scanner alone, the stream), every workload, RUNS rounds (the
# contenders' order alternating), on a fresh stack; writes bench/results/<ISO timestamp>.json and
# prints a Markdown table, the rounds' medians first. See bench/README.md.
#   make bench [N=1000000] [R=5000] [M=2] [RUNS=3] [WARMUP=1] [WORKLOADS=hot,steady,mixed] [CONTENDERS=raw,poller,scanner,stream]
# N defaults to 1,000,000 here (the N ?= above is the other benches' default).
BENCH_N = $(if $(filter command line environment,$(origin N)),$(N),1000000)
R ?= 5000
M ?= 2
WORKLOADS ?= hot,steady,mixed
CONTENDERS ?= raw,poller,scanner,stream
POLL_INTERVAL_S ?= 60
RUNS ?= 3
WARMUP ?= 1
bench: node-deps bench-stack migrate topics-apply
	npx tsc -p tsconfig.bench.json
	$(ENV) && N=$(BENCH_N) R=$(R) M=$(M) WORKLOADS=$(WORKLOADS) CONTENDERS=$(CONTENDERS) POLL_INTERVAL_S=$(POLL_INTERVAL_S) RUNS=$(RUNS) WARMUP=$(WARMUP) \
	  node dist-bench/bench/compare/main.js

# A stack restarted clean for `make bench` (its data removed, downloads kept): every bench starts
# on the same empty servers, brokers and Connect worker. BENCH_FRESH_STACK=0 keeps the running one.
BENCH_FRESH_STACK ?= 1
bench-stack: build
	@if [ "$(BENCH_FRESH_STACK)" != 0 ]; then $(STACK) clean; fi
	$(STACK) up

# The same at toy size (N=300, R=50, M=0.1, a 2 s poll): every workload and contender in about
# two minutes; checks the harness and exactness, not speed (test/integration/bench runs it too).
bench-smoke: node-deps stack-up migrate topics-apply
	npx tsc -p tsconfig.bench.json
	$(ENV) && BENCH_PRESET=smoke node dist-bench/bench/compare/main.js

stack-up: build
	$(STACK) up

stack-down:
	$(STACK) down

stack-status:
	$(STACK) status

stack-clean:
	$(STACK) clean

cluster-up: build
	$(CLUSTER) && $(STACK) up

cluster-down:
	$(CLUSTER) && $(STACK) down

migrate: build
	$(ENV) && node dist/cli/main.js migrate

topics-apply: build
	$(ENV) && node dist/cli/main.js topics apply

# The deployment step that saves the event schema ids `run` reads (the run never calls the registry).
schemas-register: build
	$(ENV) && TB_ENTITIES=$${TB_ENTITIES:-entities/demo.json} node dist/cli/main.js schemas register

# The terminal shows the stack coming up, each step's own lines and the demo's summary; the JSON
# logs of every step (migrate, topics apply, schemas register, run) go to RUN_LOG, at info
# (TB_LOG_LEVEL=debug make run for more), this run's only. RUN_SPLIT sends each line starting with
# `{` to RUN_LOG and every other line to the terminal, line by line; it ignores Ctrl-C, so the
# run's last lines, written while it stops, still reach the file.
# TB_CONNECT_URL: outbox retention deletes only what the stack's outbox connector has committed
# (docs/operations.md, Retention); without it, it deletes nothing.
# entities/demo.json is the shipped file with its reminders in seconds (3d, 1d, 30m would not
# fire during a demo); TB_ENTITIES=entities/default.json make run for the shipped one.
RUN_LOG := .stack/logs/run.log
RUN_SPLIT = (trap '' INT; while IFS= read -r line || [[ -n "$$line" ]]; do \
	  if [[ "$$line" == "{"* ]]; then printf '%s\n' "$$line" >>$(RUN_LOG); else printf '%s\n' "$$line"; fi; done)
run: install stack-up
	@mkdir -p $(dir $(RUN_LOG)) && : >$(RUN_LOG)
	@echo "make run: the JSON logs of every step below go to $(RUN_LOG) (tail -f $(RUN_LOG) to follow them)"
	@echo "migrate: the database's tables"
	@$(ENV) && node dist/cli/main.js migrate | $(RUN_SPLIT)
	@echo "topics apply: the topology's topics"
	@$(ENV) && node dist/cli/main.js topics apply | $(RUN_SPLIT)
	@echo "schemas register: the event schemas"
	@$(ENV) && TB_ENTITIES=$${TB_ENTITIES:-entities/demo.json} node dist/cli/main.js schemas register | $(RUN_SPLIT)
	@echo "run: every role, with the demo workload (Ctrl-C stops it; the stack stays up until make stack-down; logs: $(RUN_LOG))"
	@$(ENV) && TB_ENTITIES=$${TB_ENTITIES:-entities/demo.json} TB_LOG_LEVEL=$${TB_LOG_LEVEL:-info} TB_CONNECT_URL=$${TB_CONNECT_URL:-http://127.0.0.1:$$TB_CONNECT_PORT} node dist/cli/main.js run --demo | $(RUN_SPLIT)
