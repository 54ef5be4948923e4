#!/usr/bin/env bash
# The local stack: two database servers (binlog; MariaDB or MySQL by TB_DB_FLAVOUR; one with
# TB_DB_SERVERS=1), Kafka (KRaft),
# Kafka Connect + Debezium, schema registry; with TB_STACK_REPLICA=1 a GTID replica of server 1.
#   stack/stack.sh up       install if needed, start what is not running, wait until all healthy
#   stack/stack.sh down     stop everything the stack started (nothing left behind)
#   stack/stack.sh status   one line per component; exit 1 unless all are up
#   stack/stack.sh clean    down, then delete data and logs (keeps downloaded jars)
#   stack/stack.sh replica up|down|status|sql-thread stop|start
#                           the replica alone (stack/lib/replica.sh), whatever TB_STACK_REPLICA says
# Idempotent: up twice is fine, down when nothing runs is fine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for f in common db-flavour tls mariadb mysql-tree mysql replica kafka connect registry; do source "$TB_ROOT/stack/lib/$f.sh"; done

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
  if [[ $TB_STACK_REPLICA == 1 ]]; then replica_start; fi
  registry_wait
  connect_wait
  log "stack up in $((SECONDS - started))s"
  status
}

down() {
  connect_stop
  registry_stop
  kafka_stop
  stop_component replica replica-2
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
  local out; out=$(mariadb_status; mysql_status; replica_status; kafka_status; connect_status; registry_status)
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
  replica)
    case "${2:-}" in
      up) replica_start && replica_status ;;
      down) replica_stop ;;
      status) replica_status ;;
      sql-thread) replica_sql_thread "${3:-}" ;;
      *) echo "usage: $0 replica up|down|status|sql-thread stop|start" >&2; exit 2 ;;
    esac ;;
  *) echo "usage: $0 up|down|status|clean|replica …" >&2; exit 2 ;;
esac
