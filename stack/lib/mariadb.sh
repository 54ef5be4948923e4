# MariaDB: a project-owned instance with binlog on, for the application and for Debezium.

mariadb_client() {
  mariadb --no-defaults --protocol=socket --socket="$TB_STACK_HOME/run/mariadb.sock" -uroot "$@"
}

mariadb_healthy() { mariadb_client -N -e 'SELECT 1' >/dev/null 2>&1; }

mariadb_start() {
  if is_running mariadb && mariadb_healthy; then log "mariadb already up on :$TB_MARIADB_PORT"; return 0; fi
  local cnf="$TB_STACK_HOME/conf/mariadb.cnf"
  render "$TB_ROOT/stack/conf/mariadb.cnf" "$cnf"
  mkdir -p "$TB_STACK_HOME/data/mariadb-binlog" "$TB_STACK_HOME/run" "$TB_STACK_HOME/logs"
  if [[ ! -d "$TB_STACK_HOME/data/mariadb/mysql" ]]; then
    log "initialising mariadb datadir"
    mariadb-install-db --defaults-file="$cnf" --user="$(id -un)" --auth-root-authentication-method=socket \
      --skip-test-db >"$(log_file mariadb-install)" 2>&1 || { tail -20 "$(log_file mariadb-install)"; die "mariadb-install-db failed"; }
  fi
  log "starting mariadb on :$TB_MARIADB_PORT"
  launch mariadb mariadbd --defaults-file="$cnf" --user="$(id -un)"
  wait_until mariadb "$TB_START_TIMEOUT_SECONDS" mariadb_healthy
  mariadb_bootstrap
}

# Database; the owner user (migrations, the tests, make run), which may grant on its databases;
# the service user, with no privilege until `timebucket migrate` (TB_DB_SERVICE_USER) grants it
# what the running service needs (src/db/service-grants.ts); the CDC user with the grants
# Debezium's binlog reader needs; an owner-like account admitted over TLS only (the tests of
# TB_DB_TLS prove with it that a connection really is encrypted). Safe to re-run: every
# statement is IF NOT EXISTS or a GRANT.
mariadb_bootstrap() {
  mariadb_client <<SQL
CREATE DATABASE IF NOT EXISTS \`$TB_DB_NAME\`;
CREATE USER IF NOT EXISTS '$TB_DB_USER'@'%' IDENTIFIED BY '$TB_DB_PASSWORD';
CREATE USER IF NOT EXISTS '$TB_DB_USER'@'localhost' IDENTIFIED BY '$TB_DB_PASSWORD';
GRANT ALL PRIVILEGES ON \`$TB_DB_NAME\`.* TO '$TB_DB_USER'@'%' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON \`$TB_DB_NAME\`.* TO '$TB_DB_USER'@'localhost' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON \`${TB_DB_NAME}_test%\`.* TO '$TB_DB_USER'@'%' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON \`${TB_DB_NAME}_test%\`.* TO '$TB_DB_USER'@'localhost' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS '$TB_DB_SERVICE_USER'@'%' IDENTIFIED BY '$TB_DB_SERVICE_PASSWORD';
CREATE USER IF NOT EXISTS '$TB_DB_SERVICE_USER'@'localhost' IDENTIFIED BY '$TB_DB_SERVICE_PASSWORD';
CREATE USER IF NOT EXISTS '$TB_STACK_DB_TLS_USER'@'%' IDENTIFIED BY '$TB_STACK_DB_TLS_PASSWORD' REQUIRE SSL;
GRANT ALL PRIVILEGES ON \`$TB_DB_NAME\`.* TO '$TB_STACK_DB_TLS_USER'@'%' WITH GRANT OPTION;
CREATE USER IF NOT EXISTS '$TB_CDC_USER'@'%' IDENTIFIED BY '$TB_CDC_PASSWORD';
CREATE USER IF NOT EXISTS '$TB_CDC_USER'@'localhost' IDENTIFIED BY '$TB_CDC_PASSWORD';
GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR, REPLICATION SLAVE ADMIN ON *.* TO '$TB_CDC_USER'@'%';
GRANT SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR, REPLICATION SLAVE ADMIN ON *.* TO '$TB_CDC_USER'@'localhost';
FLUSH PRIVILEGES;
SQL
}

mariadb_stop() { stop_component mariadb; }

mariadb_status() {
  if mariadb_healthy; then
    echo "mariadb   up    127.0.0.1:$TB_MARIADB_PORT  log_bin=$(mariadb_client -N -e 'SELECT @@log_bin') binlog_format=$(mariadb_client -N -e 'SELECT @@binlog_format')"
  else
    echo "mariadb   down"
  fi
}
