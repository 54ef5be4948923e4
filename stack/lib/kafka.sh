# Kafka: TB_KAFKA_NODES KRaft nodes (each a broker and a controller) from the jars Maven resolved
# into $TB_STACK_LIB/kafka. Node 1 is "kafka" (its pid, log and data names), node i > 1 "kafka-i".

# KAFKA_JVM: the JVM command line shared by the brokers, the storage tool and the Connect worker
# (all run from the same jars).
KAFKA_JVM=(java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true
  "-Dlog4j.configuration=file:$TB_STACK_HOME/conf/log4j.properties"
  "-Dtimebucket.stack=$TB_STACK_HOME/" -cp "$TB_STACK_LIB/kafka/*")
kafka_java() { "${KAFKA_JVM[@]}" "$@"; }

kafka_node_name() { if (($1 == 1)); then echo kafka; else echo "kafka-$1"; fi; }
kafka_node_port() { echo $((TB_KAFKA_PORT + 10 * ($1 - 1))); }
kafka_node_controller_port() { echo $((TB_KAFKA_CONTROLLER_PORT + 10 * ($1 - 1))); }
kafka_node_sasl_port() { echo $((TB_STACK_KAFKA_SASL_PORT + 10 * ($1 - 1))); }
kafka_nodes() { seq 1 "$TB_KAFKA_NODES"; }

kafka_voters() {
  local i out=()
  for i in $(kafka_nodes); do out+=("$i@127.0.0.1:$(kafka_node_controller_port "$i")"); done
  (IFS=,; echo "${out[*]}")
}

# Healthy = both client listeners (PLAINTEXT, SASL_SSL) accept connections and the server logged
# that start-up completed. A node started before the SASL_SSL listener existed is not healthy:
# `make stack-clean` once, then `make stack-up`, gives it the listener and its SCRAM user.
kafka_node_healthy() {
  port_open "$(kafka_node_port "$1")" && port_open "$(kafka_node_sasl_port "$1")" && grep -q 'Kafka Server started' "$(log_file "$(kafka_node_name "$1")")" 2>/dev/null
}

kafka_healthy() {
  local i
  for i in $(kafka_nodes); do kafka_node_healthy "$i" || return 1; done
}

# kafka_node_start I: render node I's config, format its storage once (all nodes with one
# cluster id), launch it. Idempotent: a healthy node is left alone.
kafka_node_start() {
  local i=$1 name; name=$(kafka_node_name "$1")
  if is_running "$name" && kafka_node_healthy "$i"; then log "$name already up on :$(kafka_node_port "$i")"; return 0; fi
  local props="$TB_STACK_HOME/conf/$name.properties" data="$TB_STACK_HOME/data/$name"
  TB_KAFKA_NODE_ID=$i TB_KAFKA_NODE_PORT=$(kafka_node_port "$i") TB_KAFKA_NODE_CONTROLLER_PORT=$(kafka_node_controller_port "$i") \
    TB_KAFKA_NODE_SASL_PORT=$(kafka_node_sasl_port "$i") \
    TB_KAFKA_NODE_DATA=$data TB_KAFKA_VOTERS=$(kafka_voters) render "$TB_ROOT/stack/conf/kafka.properties" "$props"
  mkdir -p "$data" "$TB_STACK_HOME/logs"
  if [[ ! -f "$data/meta.properties" ]]; then
    log "formatting $name storage"
    local id_file="$TB_STACK_HOME/data/kafka-cluster-id"
    [[ -f "$id_file" ]] || kafka_java kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1 >"$id_file"
    # The SCRAM user of the SASL_SSL listener goes into the bootstrap metadata (KIP-900), the
    # same on every node, so it exists before any client connects.
    kafka_java kafka.tools.StorageTool format -t "$(cat "$id_file")" -c "$props" \
      --add-scram "SCRAM-SHA-512=[name=$TB_STACK_KAFKA_SASL_USER,password=$TB_STACK_KAFKA_SASL_PASSWORD]" >"$(log_file "$name-format")" 2>&1 \
      || { cat "$(log_file "$name-format")"; die "$name storage format failed"; }
  fi
  : >"$(log_file "$name")"
  log "starting $name on :$(kafka_node_port "$i")"
  launch "$name" "${KAFKA_JVM[@]}" kafka.Kafka "$props"
}

kafka_start() {
  render "$TB_ROOT/stack/conf/log4j.properties" "$TB_STACK_HOME/conf/log4j.properties"
  local i
  for i in $(kafka_nodes); do kafka_node_start "$i"; done
}

kafka_wait() {
  local i
  for i in $(kafka_nodes); do
    wait_until "$(kafka_node_name "$i")" "$TB_START_TIMEOUT_SECONDS" kafka_node_healthy "$i"
  done
  log "kafka up ($TB_KAFKA_NODES node(s): $TB_KAFKA_BROKERS)"
}

kafka_stop() {
  local i names=()
  for i in $(kafka_nodes); do names+=("$(kafka_node_name "$i")"); done
  stop_component "${names[@]}"
}

kafka_status() {
  local i up=0
  for i in $(kafka_nodes); do if is_running "$(kafka_node_name "$i")" && kafka_node_healthy "$i"; then up=$((up + 1)); fi; done
  if ((up == TB_KAFKA_NODES)); then
    echo "kafka     up    $TB_KAFKA_BROKERS, SASL_SSL $TB_STACK_KAFKA_SASL_BROKERS (KRaft, $TB_KAFKA_NODES node(s), replication factor $TB_KAFKA_REPLICATION_FACTOR)"
  elif ((up > 0)); then
    echo "kafka     degraded: $up of $TB_KAFKA_NODES nodes up"
  else
    echo "kafka     down"
  fi
}
