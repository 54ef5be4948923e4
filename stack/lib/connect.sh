# Kafka Connect (standalone) running Debezium's MariaDB connector.

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
  render "$TB_ROOT/stack/conf/debezium-mariadb.properties" "$TB_STACK_HOME/conf/debezium-mariadb.properties"
  render "$TB_ROOT/stack/conf/log4j.properties" "$TB_STACK_HOME/conf/log4j.properties"
  mkdir -p "$TB_STACK_HOME/data/connect"
  log "starting kafka connect + debezium on :$TB_CONNECT_PORT"
  launch connect "${KAFKA_JVM[@]}" org.apache.kafka.connect.cli.ConnectStandalone \
    "$TB_STACK_HOME/conf/connect-worker.properties" "$TB_STACK_HOME/conf/debezium-mariadb.properties"
}

connect_wait() { wait_until connect "$TB_START_TIMEOUT_SECONDS" connect_healthy; log "connect up, connector $CONNECTOR_NAME RUNNING"; }

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
