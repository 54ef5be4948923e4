#!/usr/bin/env bash
# test-all.sh: what `make test` runs after `make install`, overlapped where nothing can disturb:
#   1. the development stack and the three-node cluster stack (stack/cluster.env) start in the
#      background, each only if it is not up, while the formatter's check, lint, typecheck, the unit and the deployment
#      tests run (they need no stack);
#   2. the integration tests (in lanes, test/support/run-lanes.js) on the development stack
#      (server 1 MariaDB, server 2 MySQL: TB_DB_FLAVOUR=mixed, so the files over two servers run
#      one entity over one server of each), and on the cluster stack (MySQL on both) the cluster
#      tests, then the integration files marked @mysql, side by side: separate processes, ports
#      and homes;
#   3. each stack this script started is stopped, whatever the outcome.
# Exits non-zero when anything failed; the stacks' start-up logs are in .stack/reports/.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
reports="$root/.stack/reports"
mkdir -p "$reports"
make_quiet=(make --no-print-directory -C "$root")

# The dev stack's commands (and `make test-integration`) run with env.sh's defaults but the
# flavour; the cluster's with cluster.env first, which sets its own.
export TB_DB_FLAVOUR=mixed
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

"${make_quiet[@]}" format-check lint typecheck test-unit test-deploy
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

# The cluster stack's output is kept apart and printed after them, so the lanes' lines stay
# readable. The MySQL lane runs even when a cluster test failed: its result is its own.
{
  "${make_quiet[@]}" test-cluster >"$reports/cluster.log" 2>&1
  c=$?
  "${make_quiet[@]}" test-mysql >"$reports/mysql.log" 2>&1
  m=$?
  echo "$c $m" >"$reports/cluster-status"
  ((c == 0 && m == 0))
} &
cluster_pid=$!
"${make_quiet[@]}" test-integration
integration=$?
wait "$cluster_pid"
cluster_status=$?
echo "test-all: integration, cluster and MySQL tests took $((SECONDS - phase)) s"
read -r c m <"$reports/cluster-status" 2>/dev/null || { c=1; m=1; }
# A failed lane's waits on events often end in Connect: the dev worker's last errors, cut short.
if [[ $integration -ne 0 ]]; then
  echo "--- the development stack's Connect log: its last errors and warnings"
  grep -E ' (ERROR|WARN) ' "$root/.stack/logs/connect.log" 2>/dev/null | grep -vE 'no changes will be captured|NOT_LEADER_OR_FOLLOWER|invalid metadata error|UNKNOWN_TOPIC_OR_PARTITION' | tail -n 25 | cut -c1-300 || true
fi
echo "--- cluster tests (exit $c)"
grep -E '^(PASS|FAIL)|●|Tests:' "$reports/cluster.log" || true
[[ $c -eq 0 ]] || tail -n 80 "$reports/cluster.log"
echo "--- MySQL lane (exit $m)"
grep -E '(PASS|FAIL) |●|Tests:|lanes:' "$reports/mysql.log" || true
[[ $m -eq 0 ]] || tail -n 120 "$reports/mysql.log"
[[ $integration -eq 0 && $cluster_status -eq 0 ]]
