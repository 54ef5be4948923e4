# Schema registry: Apicurio Registry (Quarkus app from Maven Central), serving the
# Confluent-compatible API at /apis/ccompat/v7. 3.0.x is the newest line that runs on Java 17
# (3.1+ is compiled for Java 21).
# Storage is an H2 file under .stack/data so
# schema ids survive a restart, like the Kafka data that refers to them.

registry_url() { echo "http://127.0.0.1:$TB_REGISTRY_PORT/apis/ccompat/v7"; }

registry_healthy() { curl -fsS --max-time 5 "$(registry_url)/subjects" >/dev/null 2>&1; }

registry_start() {
  if is_running registry && registry_healthy; then log "registry already up on :$TB_REGISTRY_PORT"; return 0; fi
  mkdir -p "$TB_STACK_HOME/data/registry"
  log "starting schema registry on :$TB_REGISTRY_PORT"
  launch registry java -Xms128m -Xmx512m -XX:+UseG1GC \
    "-Dtimebucket.stack=$TB_STACK_HOME/" \
    "-Dquarkus.http.port=$TB_REGISTRY_PORT" -Dquarkus.http.host=127.0.0.1 \
    "-Dapicurio.datasource.url=jdbc:h2:file:$TB_STACK_HOME/data/registry/registry" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dapicurio.datasource.jdbc.max-size=10 \
    -Dquarkus.log.level=INFO -Dquarkus.analytics.disabled=true \
    -jar "$TB_STACK_LIB/apicurio/apicurio-registry-app-$TB_APICURIO_VERSION-runner.jar"
}

registry_wait() { wait_until registry "$TB_START_TIMEOUT_SECONDS" registry_healthy; log "registry up at $(registry_url)"; }

registry_stop() { stop_component registry; }

registry_status() {
  if is_running registry && registry_healthy; then echo "registry  up    $(registry_url)"; else echo "registry  down"; fi
}
