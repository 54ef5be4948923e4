# Kafka Connect (standalone) running Debezium's MariaDB connector. The connector's configuration
# is the one `timebucket connector config` generates from the entities file (TB_ENTITIES), put
# through the REST API as a deployment on distributed Connect would: a standalone worker keeps no
# connector configuration across restarts, so every start registers it again (its offsets and
# schema history are in files under data/connect and survive).

CONNECTOR_NAME=timebucket-cdc

connect_api() { curl -fsS --max-time 5 "http://127.0.0.1:$TB_CONNECT_PORT$1"; }

# Healthy = the worker's REST API answers and both the connector and its task are RUNNING.
connect_healthy() {
  local status
  status=$(connect_api "/connectors/$CONNECTOR_NAME/status" 2>/dev/null) || return 1
  [[ $(grep -o '"state":"RUNNING"' <<<"$status" | wc -l) -ge 2 ]]
}

connect_start() {
  if is_running connect && connect_healthy; then log "connect already up on :$TB_CONNECT_PORT"; return 0; fi
  render "$TB_ROOT/stack/conf/connect-worker.properties" "$TB_STACK_HOME/conf/connect-worker.properties"
  render "$TB_ROOT/stack/conf/log4j.properties" "$TB_STACK_HOME/conf/log4j.properties"
  mkdir -p "$TB_STACK_HOME/data/connect"
  log "starting kafka connect + debezium on :$TB_CONNECT_PORT"
  # KAFKA_JVM's classpath plus timebucket's predicate and Debezium's transforms (the table-set
  # router): install.sh says why a standalone worker needs what a connector created through the
  # REST API transforms with on its classpath. Debezium stays on the plugin path too.
  local jvm=("${KAFKA_JVM[@]}")
  jvm[${#jvm[@]} - 1]="$TB_STACK_LIB/kafka/*:$TB_STACK_LIB/connect-classpath/timebucket-smt/*:$TB_STACK_LIB/connect-plugins/debezium-mariadb/*"
  launch connect "${jvm[@]}" org.apache.kafka.connect.cli.ConnectStandalone "$TB_STACK_HOME/conf/connect-worker.properties"
}

connect_rest_up() { connect_api / >/dev/null 2>&1; }

# The generated configuration: the CLI must be built (make stack-up builds it first).
connector_config() {
  [[ -f "$TB_ROOT/dist/cli/main.js" ]] || die "dist/cli/main.js is missing: run 'make build' (make stack-up does) before starting Connect"
  (cd "$TB_ROOT" && TB_LOG_LEVEL=warn node dist/cli/main.js connector config --config-only --flavour mariadb --server-id 184054 \
    --history "file:$TB_STACK_HOME/data/connect/schema-history.dat" --replication-factor "$TB_KAFKA_REPLICATION_FACTOR" \
    --db-user "$TB_CDC_USER" --db-password "$TB_CDC_PASSWORD")
}

# PUT is create-or-update: the same call on every start.
connect_register() {
  local config
  config=$(connector_config) || die "timebucket connector config failed"
  printf '%s' "$config" >"$TB_STACK_HOME/conf/connector-$CONNECTOR_NAME.json"
  curl -fsS --max-time 120 -X PUT -H 'Content-Type: application/json' --data-binary "@$TB_STACK_HOME/conf/connector-$CONNECTOR_NAME.json" \
    "http://127.0.0.1:$TB_CONNECT_PORT/connectors/$CONNECTOR_NAME/config" >/dev/null || die "registering connector $CONNECTOR_NAME failed"
}

connect_wait() {
  wait_until connect "$TB_START_TIMEOUT_SECONDS" connect_rest_up
  connect_healthy || connect_register
  wait_until connect "$TB_START_TIMEOUT_SECONDS" connect_healthy
  log "connect up, connector $CONNECTOR_NAME RUNNING"
}

connect_stop() { stop_component connect; }

connect_status() {
  if is_running connect && connect_healthy; then
    echo "connect   up    127.0.0.1:$TB_CONNECT_PORT connector $CONNECTOR_NAME RUNNING"
  elif is_running connect; then
    echo "connect   degraded: $(connect_api "/connectors/$CONNECTOR_NAME/status" 2>&1 | head -c 400)"
  else
    echo "connect   down"
  fi
}
