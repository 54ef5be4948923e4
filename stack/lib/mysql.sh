# MySQL: project-owned instances (TB_DB_FLAVOUR mysql or mixed, stack/lib/db-flavour.sh), run from
# the sid tree of stack/lib/mysql-tree.sh. Instance 1 is "mysql", instance 2 "mysql-2" (their pid,
# socket, log and data names), on the same ports as MariaDB's instances would be. Configured as
# the MySQL servers teams run: binlog ROW/FULL, GTIDs on, a server id of its own, TLS with the
# stack's CA, and the accounts of stack/lib/mariadb.sh created for caching_sha2_password, MySQL's
# only built-in password plugin since 8.4.

mysql_name() { if (($1 == 1)); then echo mysql; else echo "mysql-$1"; fi; }

# mysql_client I ARGS...: the tree's mysql client as root over instance I's socket.
mysql_client() {
  local i=$1; shift
  mysql_tree_run usr/bin/mysql --no-defaults --protocol=socket --socket="$TB_STACK_HOME/run/$(mysql_name "$i").sock" -uroot "$@"
}

mysql_healthy() { mysql_client "$1" -N -e 'SELECT 1' >/dev/null 2>&1; }

# mysql_config I CNF: the checked-in settings (stack/conf/mysql.cnf), then instance I's paths and identity.
mysql_config() {
  local i=$1 cnf=$2 name; name=$(mysql_name "$1")
  render "$TB_ROOT/stack/conf/mysql.cnf" "$cnf"
  cat >>"$cnf" <<CNF

# Instance $i ($name, stack/lib/mysql.sh): its own files and server id.
datadir=$TB_STACK_HOME/data/$name
port=$(db_port "$i")
socket=$TB_STACK_HOME/run/$name.sock
pid-file=$TB_STACK_HOME/run/mysqld-$i.own.pid
log-error=$TB_STACK_HOME/logs/$name-error.log
tmpdir=$TB_STACK_HOME/tmp/$name
server_id=$i
log_bin=$TB_STACK_HOME/data/$name-binlog/binlog
CNF
}

MYSQL_LAUNCHED=()

# mysql_instance_start I: initialise instance I's datadir once and launch it, unless it is up.
mysql_instance_start() {
  local i=$1 name; name=$(mysql_name "$1")
  if is_running "$name" && mysql_healthy "$i"; then log "$name already up on :$(db_port "$i")"; return 0; fi
  port_free_for "$name" "$(db_port "$i")"
  local cnf="$TB_STACK_HOME/conf/$name.cnf"
  mysql_config "$i" "$cnf"
  mkdir -p "$TB_STACK_HOME/data/$name-binlog" "$TB_STACK_HOME/run" "$TB_STACK_HOME/logs" "$TB_STACK_HOME/tmp/$name"
  if [[ ! -d "$TB_STACK_HOME/data/$name/mysql" ]]; then
    log "initialising $name datadir"
    rm -rf "$TB_STACK_HOME/data/$name" "$TB_STACK_HOME/data/$name-binlog" && mkdir -p "$TB_STACK_HOME/data/$name-binlog"
    # root@localhost with an empty password, reachable over the instance's socket only
    # (bind-address is loopback and bootstrap gives it no TCP account of its own).
    mysql_tree_run usr/sbin/mysqld --defaults-file="$cnf" --initialize-insecure --user="$(id -un)" \
      >"$(log_file "$name-install")" 2>&1 || { tail -20 "$TB_STACK_HOME/logs/$name-error.log" >&2; die "mysqld --initialize failed for $name"; }
  fi
  log "starting $name on :$(db_port "$i")"
  launch "$name" "$(mysql_tree_loader)" --library-path "$(mysql_tree_library_path)" "$TB_MYSQL_TREE/usr/sbin/mysqld" \
    --defaults-file="$cnf" --user="$(id -un)"
  MYSQL_LAUNCHED+=("$i")
}

mysql_start() {
  local i instances; instances=$(db_instances_of mysql)
  [[ -n $instances ]] || return 0
  mysql_tree_ensure
  MYSQL_LAUNCHED=()
  for i in $instances; do mysql_instance_start "$i"; done
  for i in "${MYSQL_LAUNCHED[@]}"; do
    wait_until "$(mysql_name "$i")" "$TB_START_TIMEOUT_SECONDS" mysql_healthy "$i"
    mysql_bootstrap "$i"
  done
}

# mysql_bootstrap I: the stack's database and accounts on instance I (db_bootstrap_sql), created for
# caching_sha2_password; the CDC user with the grants Debezium's MySQL connector documents
# (REPLICATION CLIENT where MariaDB has BINLOG MONITOR). The owner account gets REPLICATION
# CLIENT too: `make bench` reads the binlog's size with SHOW BINARY LOGS, MySQL having no
# Binlog_bytes_written counter (bench/lib/db-server.ts).
mysql_bootstrap() {
  {
    db_bootstrap_sql 'WITH caching_sha2_password' 'SELECT, RELOAD, SHOW DATABASES, LOCK TABLES, REPLICATION SLAVE, REPLICATION CLIENT'
    echo "GRANT REPLICATION CLIENT ON *.* TO '$TB_DB_USER'@'%';"
    echo "GRANT REPLICATION CLIENT ON *.* TO '$TB_DB_USER'@'localhost';"
  } | mysql_client "$1"
}

mysql_stop() { stop_component mysql mysql-2; }

mysql_status() {
  local i name vars version log_bin format image gtid server_id
  for i in $(db_instances_of mysql); do
    name=$(mysql_name "$i")
    if mysql_healthy "$i" && vars=$(mysql_client "$i" -N -e 'SELECT VERSION(), @@log_bin, @@binlog_format, @@binlog_row_image, @@gtid_mode, @@server_id'); then
      read -r version log_bin format image gtid server_id <<<"$vars"
      printf '%-9s up    127.0.0.1:%s  mysql %s log_bin=%s binlog_format=%s row_image=%s gtid_mode=%s server_id=%s\n' \
        "$name" "$(db_port "$i")" "$version" "$log_bin" "$format" "$image" "$gtid" "$server_id"
    else
      printf '%-9s down\n' "$name"
    fi
  done
}
