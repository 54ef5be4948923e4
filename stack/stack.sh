#!/usr/bin/env bash
# The local stack: two database servers (binlog; MariaDB or MySQL by TB_DB_FLAVOUR; one with
# TB_DB_SERVERS=1), Kafka (KRaft),
# Kafka Connect + Debezium, schema registry.
#   stack/stack.sh up       install if needed, start what is not running, wait until all healthy
#   stack/stack.sh down     stop everything the stack started (nothing left behind)
#   stack/stack.sh status   one line per component; exit 1 unless all are up
#   stack/stack.sh clean    down, then delete data and logs (keeps downloaded jars)
# Idempotent: up twice is fine, down when nothing runs is fine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for f in common db-flavour tls mariadb mysql-tree mysql kafka connect registry; do source "$TB_ROOT/stack/lib/$f.sh"; done

up() {
  bash "$TB_ROOT/stack/install.sh"
  local started=$SECONDS
  tls_ensure
  # The database servers, Kafka and the registry do not depend on each other: start them
  # together, then Connect, which needs the databases and Kafka.
  kafka_start
  registry_start
  mariadb_start
  mysql_start
  kafka_wait
  connect_start
  registry_wait
  connect_wait
  log "stack up in $((SECONDS - started))s"
  status
}

down() {
  connect_stop
  registry_stop
  kafka_stop
  mariadb_stop
  mysql_stop
  local left
  left=$(stack_processes)
  if [[ -n "$left" ]]; then
    log "killing leftover stack processes: $left"
    kill -KILL $left 2>/dev/null || true
  fi
  log "stack down"
}

status() {
  local out; out=$(mariadb_status; mysql_status; kafka_status; connect_status; registry_status)
  echo "$out"
  ! grep -qE ' (down|degraded)' <<<"$out"
}

clean() {
  down
  rm -rf "$TB_STACK_HOME/data" "$TB_STACK_HOME/logs" "$TB_STACK_HOME/conf" "$TB_STACK_HOME/run"
  log "stack data removed"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  clean) clean ;;
  *) echo "usage: $0 up|down|status|clean" >&2; exit 2 ;;
esac
