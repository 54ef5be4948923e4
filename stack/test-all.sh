#!/usr/bin/env bash
# test-all.sh: what `make test` runs after `make install`, overlapped where nothing can disturb:
#   1. the development stack and the three-node cluster stack (stack/cluster.env) start in the
#      background, each only if it is not up, while lint, typecheck, the unit and the deployment
#      tests run (they need no stack);
#   2. the integration tests (in lanes, test/support/run-lanes.js) on the development stack and
#      the cluster tests on the cluster stack, side by side: separate processes, ports and homes;
#   3. each stack this script started is stopped, whatever the outcome.
# Exits non-zero when anything failed; the stacks' start-up logs are in .stack/reports/.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
reports="$root/.stack/reports"
mkdir -p "$reports"
make_quiet=(make --no-print-directory -C "$root")

# The dev stack's commands run with env.sh's defaults; the cluster's with cluster.env first.
dev() { bash "$here/stack.sh" "$@"; }
cluster() { (source "$here/cluster.env" && bash "$here/stack.sh" "$@"); }

started=()
stop_started() {
  local s
  for s in "${started[@]}"; do "$s" down >/dev/null 2>&1 || echo "test-all: stopping the $s stack failed" >&2; done
}
trap stop_started EXIT

# The CLI must be built before Connect starts (it generates the connectors' configuration).
"${make_quiet[@]}" build || exit 1

pids=()
for s in dev cluster; do
  if "$s" status >/dev/null 2>&1; then continue; fi
  started+=("$s")
  "$s" up >"$reports/stack-up-$s.log" 2>&1 &
  pids+=("$s:$!")
done

"${make_quiet[@]}" lint typecheck test-unit test-deploy
checks=$?

up=0
for p in "${pids[@]}"; do
  if ! wait "${p#*:}"; then
    echo "test-all: the ${p%%:*} stack did not start; its log:" >&2
    tail -n 40 "$reports/stack-up-${p%%:*}.log" >&2
    up=1
  fi
done
[[ $checks -eq 0 && $up -eq 0 ]] || exit 1
echo "test-all: checks and stack start-ups took ${SECONDS} s"
phase=$SECONDS

# The cluster tests' output is kept apart and printed after them, so the lanes' lines stay readable.
"${make_quiet[@]}" test-cluster >"$reports/cluster.log" 2>&1 &
cluster_pid=$!
"${make_quiet[@]}" test-integration
integration=$?
wait "$cluster_pid"
cluster_status=$?
echo "test-all: integration and cluster tests took $((SECONDS - phase)) s"
echo "--- cluster tests (exit $cluster_status)"
grep -E '^(PASS|FAIL)|●|Tests:' "$reports/cluster.log" || true
[[ $cluster_status -eq 0 ]] || tail -n 80 "$reports/cluster.log"
[[ $integration -eq 0 && $cluster_status -eq 0 ]]
