# MariaDB: project-owned instances with binlog on, for the application and for Debezium: the
# stack's instances whose TB_DB_FLAVOUR is mariadb (stack/lib/db-flavour.sh). Instance 1 is
# "mariadb" (its pid, socket, log and data names) on TB_STACK_DB_PORT; instance 2, "mariadb-2" on
# TB_STACK_DB2_PORT, is a second, independent
# server for the tests that run one entity over two database servers: its own datadir, binlog,
# socket and server_id (Debezium needs every server id to be unique), the same database and
# accounts. Instance 1 keeps the file names it had before there was a second, so an existing
# stack keeps its data.

mariadb_name() { if (($1 == 1)); then echo mariadb; else echo "mariadb-$1"; fi; }
mariadb_port() { db_port "$1"; }
mariadb_instances() { db_instances_of mariadb; }

# mariadb_client I ARGS...: the mariadb client as root over instance I's socket.
mariadb_client() {
  local i=$1; shift
  mariadb --no-defaults --protocol=socket --socket="$TB_STACK_HOME/run/$(mariadb_name "$i").sock" -uroot "$@"
}

mariadb_healthy() { mariadb_client "$1" -N -e 'SELECT 1' >/dev/null 2>&1; }

# mariadb_config I CNF: render instance I's option file to CNF. Instance 2 gets the same
# settings as instance 1 (the checked-in template), then its own paths and identity appended:
# in an option file the later setting wins, for mariadbd and mariadb-install-db alike.
mariadb_config() {
  local i=$1 cnf=$2 name; name=$(mariadb_name "$1")
  render "$TB_ROOT/stack/conf/mariadb.cnf" "$cnf"
  if ((i > 1)); then
    cat >>"$cnf" <<CNF

# Instance $i ($name, stack/lib/mariadb.sh): its own files and server id; the rest as above.
[mariadbd]
datadir=$TB_STACK_HOME/data/$name
port=$(mariadb_port "$i")
socket=$TB_STACK_HOME/run/$name.sock
pid-file=$TB_STACK_HOME/run/mariadbd-$i.own.pid
log-error=$TB_STACK_HOME/logs/$name-error.log
tmpdir=$TB_STACK_HOME/tmp/$name
server_id=$i
log_bin=$TB_STACK_HOME/data/$name-binlog/binlog
CNF
  fi
}

# Instances the current mariadb_start launched (and so bootstraps); one already up is left alone.
MARIADB_LAUNCHED=()

# mariadb_instance_start I: initialise instance I's datadir once and launch it, unless it is up.
mariadb_instance_start() {
  local i=$1 name; name=$(mariadb_name "$1")
  if is_running "$name" && mariadb_healthy "$i"; then log "$name already up on :$(mariadb_port "$i")"; return 0; fi
  port_free_for "$name" "$(mariadb_port "$i")"
  local cnf="$TB_STACK_HOME/conf/$name.cnf"
  mariadb_config "$i" "$cnf"
  mkdir -p "$TB_STACK_HOME/data/$name-binlog" "$TB_STACK_HOME/run" "$TB_STACK_HOME/logs" "$TB_STACK_HOME/tmp/$name"
  if [[ ! -d "$TB_STACK_HOME/data/$name/mysql" ]]; then
    log "initialising $name datadir"
    mariadb-install-db --defaults-file="$cnf" --user="$(id -un)" --auth-root-authentication-method=socket \
      --skip-test-db >"$(log_file "$name-install")" 2>&1 || { tail -20 "$(log_file "$name-install")"; die "mariadb-install-db failed for $name"; }
  fi
  # After a crash (SIGKILL) the datadir is as it was left: InnoDB's recovery replays its redo log.
  log "starting $name on :$(mariadb_port "$i")"
  launch "$name" mariadbd --defaults-file="$cnf" --user="$(id -un)"
  MARIADB_LAUNCHED+=("$i")
}

# Launch every instance first, then wait: the two servers start side by side.
mariadb_start() {
  local i
  MARIADB_LAUNCHED=()
  for i in $(mariadb_instances); do mariadb_instance_start "$i"; done
  for i in "${MARIADB_LAUNCHED[@]}"; do
    wait_until "$(mariadb_name "$i")" "$TB_START_TIMEOUT_SECONDS" mariadb_healthy "$i"
    mariadb_bootstrap "$i"
  done
}

# mariadb_bootstrap I: the stack's database and accounts on instance I (db_bootstrap_sql); the
# CDC user with the grants Debezium's MariaDB connector needs.
mariadb_bootstrap() {
  db_bootstrap_sql '' 'SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, BINLOG MONITOR, REPLICATION SLAVE ADMIN' | mariadb_client "$1"
}

# Both instances whatever TB_DB_SERVERS is now: the second may have been started by an `up` with
# a different setting, and `down` leaves nothing behind (stop_component skips what never ran).
mariadb_stop() { stop_component mariadb mariadb-2; }

mariadb_status() {
  local i name vars version log_bin format server_id
  for i in $(mariadb_instances); do
    name=$(mariadb_name "$i")
    if mariadb_healthy "$i" && vars=$(mariadb_client "$i" -N -e 'SELECT VERSION(), @@log_bin, @@binlog_format, @@server_id'); then
      read -r version log_bin format server_id <<<"$vars"
      printf '%-9s up    127.0.0.1:%s  mariadb %s log_bin=%s binlog_format=%s server_id=%s\n' "$name" "$(mariadb_port "$i")" "$version" "$log_bin" "$format" "$server_id"
    else
      printf '%-9s down\n' "$name"
    fi
  done
}
