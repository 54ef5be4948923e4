# timebucket — the two commands a newcomer needs:
#   make run    bring up the local stack, migrate, apply topics, run all roles on a demo workload
#   make test   install everything, start the stack, run unit + integration tests, stop the stack
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
export TB_ROOT := $(CURDIR)
STACK := bash stack/stack.sh
ENV := set -a && source stack/env.sh && set +a
REPORTS := .stack/reports

.PHONY: help install node-deps stack-install build lint typecheck check test-unit test-integration test \
        stack-up stack-down stack-status stack-clean migrate topics-apply run bench-hot-minute

help:
	@echo "make run           stack up, migrate, apply topics, run every role with a demo workload (Ctrl-C stops; make stack-down stops the stack)"
	@echo "make test          install, stack up, unit + integration tests, stack down"
	@echo "make stack-up | stack-down | stack-status | stack-clean | migrate | check"

# npm ci only when the lock file changed since the last install.
node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

node-deps: node_modules/.installed

stack-install:
	bash stack/install.sh

install: node-deps stack-install

build: node-deps
	npx tsc -p tsconfig.build.json

lint: node-deps
	npx eslint .

typecheck: node-deps
	npx tsc -p tsconfig.json --noEmit

check: lint typecheck test-unit

test-unit: node-deps
	@mkdir -p $(REPORTS)
	npx jest --selectProjects unit --json --outputFile=$(REPORTS)/unit.json

# The crash test runs the CLI from dist/ as a separate process, hence build first.
# --forceExit: a test that fails half-way may leave a client connected; CI must still finish.
test-integration: build
	@mkdir -p $(REPORTS)
	$(ENV) && npx jest --selectProjects integration --runInBand --forceExit --json --outputFile=$(REPORTS)/integration.json

# The stack is stopped afterwards even when tests fail (only if this target started it).
test: install
	@rm -rf $(REPORTS)
	$(MAKE) --no-print-directory lint typecheck test-unit
	bash stack/with-stack.sh $(MAKE) --no-print-directory test-integration
	@node test/support/print-summary.js $(REPORTS)/unit.json $(REPORTS)/integration.json

# Benchmark (not a test): N coupons due in the same instant; prints one JSON line of results.
N ?= 100000
bench-hot-minute: node-deps stack-up migrate topics-apply
	npx tsc -p tsconfig.bench.json
	$(ENV) && N=$(N) node dist-bench/bench/hot-minute.js

stack-up:
	$(STACK) up

stack-down:
	$(STACK) down

stack-status:
	$(STACK) status

stack-clean:
	$(STACK) clean

migrate: build
	$(ENV) && node dist/cli/main.js migrate

topics-apply: build
	$(ENV) && node dist/cli/main.js topics apply

# Logs at warn so the demo's summary lines stand out; TB_LOG_LEVEL=info make run for more.
run: install stack-up migrate topics-apply
	$(ENV) && TB_LOG_LEVEL=$${TB_LOG_LEVEL:-warn} node dist/cli/main.js run --demo
