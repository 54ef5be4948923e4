# Kafka: one KRaft node (broker + controller) from the jars Maven resolved into .stack/lib/kafka.

# KAFKA_JVM: the JVM command line shared by the broker, its storage tool and the Connect worker
# (all three run from the same jars).
KAFKA_JVM=(java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true
  "-Dlog4j.configuration=file:$TB_STACK_HOME/conf/log4j.properties"
  "-Dtimebucket.stack=$TB_STACK_HOME/" -cp "$TB_STACK_HOME/lib/kafka/*")
kafka_java() { "${KAFKA_JVM[@]}" "$@"; }

# Healthy = the listener accepts connections and the server logged that start-up completed.
kafka_healthy() {
  port_open "$TB_KAFKA_PORT" && grep -q 'Kafka Server started' "$(log_file kafka)" 2>/dev/null
}

kafka_start() {
  if is_running kafka && kafka_healthy; then log "kafka already up on :$TB_KAFKA_PORT"; return 0; fi
  local props="$TB_STACK_HOME/conf/kafka.properties"
  render "$TB_ROOT/stack/conf/kafka.properties" "$props"
  render "$TB_ROOT/stack/conf/log4j.properties" "$TB_STACK_HOME/conf/log4j.properties"
  mkdir -p "$TB_STACK_HOME/data/kafka" "$TB_STACK_HOME/logs"
  if [[ ! -f "$TB_STACK_HOME/data/kafka/meta.properties" ]]; then
    log "formatting kafka storage"
    local cluster_id
    cluster_id=$(kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
    kafka_java kafka.tools.StorageTool format -t "$cluster_id" -c "$props" >"$(log_file kafka-format)" 2>&1 \
      || { cat "$(log_file kafka-format)"; die "kafka storage format failed"; }
  fi
  : >"$(log_file kafka)"
  log "starting kafka on :$TB_KAFKA_PORT"
  launch kafka "${KAFKA_JVM[@]}" kafka.Kafka "$props"
}

kafka_wait() { wait_until kafka "$TB_START_TIMEOUT_SECONDS" kafka_healthy; log "kafka up"; }

kafka_stop() { stop_component kafka; }

kafka_status() {
  if is_running kafka && kafka_healthy; then echo "kafka     up    127.0.0.1:$TB_KAFKA_PORT (KRaft)"; else echo "kafka     down"; fi
}
