# Kafka Connect (standalone) running Debezium's MariaDB or MySQL connector (the class of database
# server 1's flavour) twice: the CDC connector of the
# mapped tables, and the outbox connector that publishes event_outbox through Debezium's Outbox
# Event Router. Their configurations are the ones `timebucket connector config [--outbox]`
# generates from the entities file (TB_ENTITIES), put through the REST API as a deployment on
# distributed Connect would: a standalone worker keeps no connector configuration across
# restarts, so every start registers them again (their offsets and schema histories are in files
# under data/connect/<server 1's flavour> and survive).

# Debezium's positions are a server's binlog coordinates and GTIDs (MariaDB's 0-1-42 and MySQL's
# uuid:1-42 do not parse as each other): kept per flavour of the server the connectors read, so
# a stack switched from one TB_DB_FLAVOUR to another and back resumes each where it was, as the
# servers keep their own data directories.
export TB_CONNECT_DATA="$TB_STACK_HOME/data/connect/$(db_flavour 1)"

CONNECTOR_NAME=timebucket-cdc
OUTBOX_CONNECTOR_NAME=timebucket-outbox
CONNECTOR_NAMES=("$CONNECTOR_NAME" "$OUTBOX_CONNECTOR_NAME")

connect_api() { curl -fsS --max-time 5 "http://127.0.0.1:$TB_CONNECT_PORT$1"; }

# Healthy = the worker's REST API answers and each connector and its task are RUNNING.
connector_healthy() {
  local status
  status=$(connect_api "/connectors/$1/status" 2>/dev/null) || return 1
  [[ $(grep -o '"state":"RUNNING"' <<<"$status" | wc -l) -ge 2 ]]
}
connect_healthy() {
  local name
  for name in "${CONNECTOR_NAMES[@]}"; do connector_healthy "$name" || return 1; done
}

connect_start() {
  # Before the worker starts: a worker started without its connectors would be left running.
  [[ -f "$TB_ROOT/dist/cli/main.js" ]] || die "dist/cli/main.js is missing: run 'make build' (make stack-up does) before starting Connect"
  # A worker whose REST API answers is kept, even without its connectors (an earlier start
  # failed to register them): a second one could not bind the port, and connect_wait registers
  # what is missing. One that does not answer (killed, a zombie not yet reaped) is replaced.
  if is_running connect && connect_rest_up; then
    if connect_healthy; then log "connect already up on :$TB_CONNECT_PORT"; else log "connect running on :$TB_CONNECT_PORT; registering its connectors"; fi
    return 0
  fi
  render "$TB_ROOT/stack/conf/connect-worker.properties" "$TB_STACK_HOME/conf/connect-worker.properties"
  render "$TB_ROOT/stack/conf/log4j.properties" "$TB_STACK_HOME/conf/log4j.properties"
  mkdir -p "$TB_CONNECT_DATA"
  log "starting kafka connect + debezium on :$TB_CONNECT_PORT"
  # The heap of Kafka's own Connect scripts (2 GB at most), and 1 GB from the start: a hot minute
  # publishes tens of thousands of events a second, and Debezium allocates some 10 KB for each
  # (its metrics render every event as text). On the brokers' 256 MB start the young generation
  # was collected about twice a second, a large part of the worker's CPU.
  local jvm=() arg
  for arg in "${KAFKA_JVM[@]}"; do
    case $arg in
      -Xms*) jvm+=(-Xms1g) ;;
      -Xmx*) jvm+=(-Xmx2g) ;;
      *) jvm+=("$arg") ;;
    esac
  done
  # KAFKA_JVM's classpath plus timebucket's predicate and Debezium's transforms (the table-set
  # router): install.sh says why a standalone worker needs what a connector created through the
  # REST API transforms with on its classpath. Debezium stays on the plugin path too.
  jvm[${#jvm[@]} - 1]="$TB_STACK_LIB/kafka/*:$TB_STACK_LIB/connect-classpath/timebucket-smt/*:$TB_STACK_LIB/connect-plugins/debezium/*"
  launch connect "${jvm[@]}" org.apache.kafka.connect.cli.ConnectStandalone "$TB_STACK_HOME/conf/connect-worker.properties"
}

connect_rest_up() { connect_api / >/dev/null 2>&1; }

# The generated configuration of connector $1: the CLI must be built (make stack-up builds it first).
connector_config() {
  [[ -f "$TB_ROOT/dist/cli/main.js" ]] || die "dist/cli/main.js is missing: run 'make build' (make stack-up does) before starting Connect"
  local kind=() server_id=184054 history=schema-history.dat
  if [[ $1 == "$OUTBOX_CONNECTOR_NAME" ]]; then kind=(--outbox); server_id=184154; history=outbox-schema-history.dat; fi
  (cd "$TB_ROOT" && TB_LOG_LEVEL=warn node dist/cli/main.js connector config "${kind[@]}" --config-only --flavour auto --server-id "$server_id" \
    --history "file:$TB_CONNECT_DATA/$history" --replication-factor "$TB_KAFKA_REPLICATION_FACTOR" \
    --db-user "$TB_CDC_USER" --db-password "$TB_CDC_PASSWORD")
}

# PUT is create-or-update: the same call on every start.
connect_register() {
  local name config
  for name in "${CONNECTOR_NAMES[@]}"; do
    connector_healthy "$name" && continue
    config=$(connector_config "$name") || die "timebucket connector config failed"
    printf '%s' "$config" >"$TB_STACK_HOME/conf/connector-$name.json"
    curl -fsS --max-time 120 -X PUT -H 'Content-Type: application/json' --data-binary "@$TB_STACK_HOME/conf/connector-$name.json" \
      "http://127.0.0.1:$TB_CONNECT_PORT/connectors/$name/config" >/dev/null || die "registering connector $name failed"
  done
}

connect_wait() {
  wait_until connect "$TB_START_TIMEOUT_SECONDS" connect_rest_up
  connect_healthy || connect_register
  wait_until connect "$TB_START_TIMEOUT_SECONDS" connect_healthy
  log "connect up, connectors ${CONNECTOR_NAMES[*]} RUNNING"
}

connect_stop() { stop_component connect; }

connect_status() {
  if is_running connect && connect_healthy; then
    echo "connect   up    127.0.0.1:$TB_CONNECT_PORT connectors ${CONNECTOR_NAMES[*]} RUNNING"
  elif is_running connect; then
    local name
    for name in "${CONNECTOR_NAMES[@]}"; do
      connector_healthy "$name" || echo "connect   degraded: $(connect_api "/connectors/$name/status" 2>&1 | head -c 400)"
    done
  else
    echo "connect   down"
  fi
}
