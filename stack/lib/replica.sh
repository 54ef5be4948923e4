# An asynchronous GTID replica of one of the stack's database servers (TB_STACK_REPLICA_SOURCE,
# server 1 by default), of the same server as its source: MariaDB 10.11 replicating with
# MASTER_USE_GTID=slave_pos, MySQL 9.7 with SOURCE_AUTO_POSITION=1; over TLS verified against the
# stack's CA either way (caching_sha2_password then needs no RSA key exchange). `make stack-up`
# starts it when TB_STACK_REPLICA=1; `stack/stack.sh replica up` starts it alone (the integration
# test of the replica-lag reader does, when the stack runs none). Read-only; its own port
# (TB_STACK_REPLICA_PORT), datadir .stack/data/<name>-<flavour> (kept per flavour, as the servers'
# are: a stack switched to the other flavour starts a replica of its own), socket, logs and server
# id 100 + source.
#
# Seeding: a replica of a server that already holds data (every stack that has been used) starts
# from a dump of the whole source taken in one consistent snapshot (--single-transaction) with the
# GTID position of that snapshot, accounts (the mysql schema) included: every later GRANT, ALTER
# or DROP USER of the source then finds its account on the replica, where a replica without them
# would stop at the first one. A dump that races a test's DROP DATABASE fails; it is taken again.
# A replica once seeded resumes from its own position when started again.
#
# Accounts, on the source (so they replicate): TB_STACK_REPL_USER with REPLICATION SLAVE alone,
# for the replica's I/O thread; TB_STACK_REPLICA_READER_USER with no privilege at all until
# `timebucket migrate` grants it SELECT on each database's timebucket_heartbeat (the service's
# replica-lag reader, TB_DB_REPLICA_USER: src/db/replica-heartbeat.ts).

replica_source() { echo "${TB_STACK_REPLICA_SOURCE:-1}"; }
replica_name() { if (($(replica_source) == 1)); then echo replica; else echo "replica-$(replica_source)"; fi; }
replica_flavour() { db_flavour "$(replica_source)"; }
replica_sock() { echo "$TB_STACK_HOME/run/$(replica_name).sock"; }
replica_data() { echo "$TB_STACK_HOME/data/$(replica_name)-$(replica_flavour)"; }

# replica_source_client ARGS...: root on the source server, over its socket.
replica_source_client() {
  if [[ $(replica_flavour) == mariadb ]]; then mariadb_client "$(replica_source)" "$@"; else mysql_client "$(replica_source)" "$@"; fi
}

# replica_client ARGS...: root on the replica, over its socket (the same clients as the source's).
replica_client() {
  if [[ $(replica_flavour) == mariadb ]]; then
    mariadb --no-defaults --protocol=socket --socket="$(replica_sock)" -uroot "$@"
  else
    mysql_tree_run usr/bin/mysql --no-defaults --protocol=socket --socket="$(replica_sock)" -uroot "$@"
  fi
}

replica_healthy() { replica_client -N -e 'SELECT 1' >/dev/null 2>&1; }

# replica_config CNF: the source's settings (its template), then the replica's own files and
# identity, read-only. The binlog stays on, in a directory of its own: MySQL keeps its GTID state in it.
replica_config() {
  local cnf=$1 name section; name=$(replica_name)
  if [[ $(replica_flavour) == mariadb ]]; then section=mariadbd; else section=mysqld; fi
  render "$TB_ROOT/stack/conf/$(replica_flavour).cnf" "$cnf"
  cat >>"$cnf" <<CNF

# The replica of server $(replica_source) (stack/lib/replica.sh): its own files and server id; read-only.
[$section]
datadir=$(replica_data)
port=$TB_STACK_REPLICA_PORT
socket=$(replica_sock)
pid-file=$TB_STACK_HOME/run/$name.own.pid
log-error=$TB_STACK_HOME/logs/$name-error.log
tmpdir=$TB_STACK_HOME/tmp/$name
server_id=$((100 + $(replica_source)))
log_bin=$(replica_data)-binlog/binlog
read_only=ON
CNF
}

# The replication and reader accounts on the source, before the dump (so the replica has them too).
replica_source_accounts() {
  local auth='' host
  [[ $(replica_flavour) == mysql ]] && auth='WITH caching_sha2_password'
  for host in % localhost; do
    echo "CREATE USER IF NOT EXISTS '$TB_STACK_REPL_USER'@'$host' IDENTIFIED $auth BY '$TB_STACK_REPL_PASSWORD';"
    echo "GRANT REPLICATION SLAVE ON *.* TO '$TB_STACK_REPL_USER'@'$host';"
    echo "CREATE USER IF NOT EXISTS '$TB_STACK_REPLICA_READER_USER'@'$host' IDENTIFIED $auth BY '$TB_STACK_REPLICA_READER_PASSWORD';"
  done
}

# replica_dump OUT: the whole source in one snapshot, with its GTID position; up to 3 tries.
replica_dump() {
  local out=$1 try
  for try in 1 2 3; do
    if [[ $(replica_flavour) == mariadb ]]; then
      # --master-data=2: the position as a comment (read by replica_seed), not as statements that
      # the dump's own mysql.gtid_slave_pos table, loaded after them, would wipe.
      mariadb-dump --no-defaults --protocol=socket --socket="$TB_STACK_HOME/run/$(mariadb_name "$(replica_source)").sock" -uroot \
        --all-databases --single-transaction --gtid --master-data=2 --routines --events --triggers >"$out" 2>>"$(log_file "$(replica_name)-seed")" && return 0
    else
      mysql_tree_run usr/bin/mysqldump --no-defaults --protocol=socket --socket="$TB_STACK_HOME/run/$(mysql_name "$(replica_source)").sock" -uroot \
        --all-databases --single-transaction --set-gtid-purged=ON --routines --events --triggers >"$out" 2>>"$(log_file "$(replica_name)-seed")" && return 0
    fi
    log "dump of server $(replica_source) failed (try $try; a database dropped meanwhile?)"
  done
  return 1
}

# replica_seed: load the dump into the new replica and point it at the source's GTID position.
# Nothing of the seeding goes into the replica's own binlog (sql_log_bin = 0): a transaction of the
# replica's own would be an errant GTID, which a failover to it would then send to the others.
replica_seed() {
  local dump="$TB_STACK_HOME/tmp/$(replica_name)/seed.sql" source_port; source_port=$(db_port "$(replica_source)")
  replica_source_accounts | replica_source_client || die "could not create the replication accounts on server $(replica_source)"
  replica_dump "$dump" || die "could not dump server $(replica_source) (log: $(log_file "$(replica_name)-seed"))"
  local tls="SSL=1, MASTER_SSL_CA='$TB_STACK_TLS_DIR/ca.pem', MASTER_SSL_VERIFY_SERVER_CERT=1"
  if [[ $(replica_flavour) == mariadb ]]; then
    local gtid; gtid=$(grep -m1 -oE "gtid_slave_pos='[^']*'" "$dump" | cut -d"'" -f2)
    { echo 'SET SESSION sql_log_bin = 0;'; cat "$dump"; } | replica_client || die "loading the dump into $(replica_name) failed"
    replica_client -e "SET SESSION sql_log_bin = 0; FLUSH PRIVILEGES; SET GLOBAL gtid_slave_pos='$gtid';
      CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$source_port, MASTER_USER='$TB_STACK_REPL_USER',
        MASTER_PASSWORD='$TB_STACK_REPL_PASSWORD', MASTER_$tls, MASTER_USE_GTID=slave_pos;
      START SLAVE;" || die "could not start replicating on $(replica_name)"
  else
    # A new datadir's GTID state is empty, and so the dump's GTID_PURGED applies as it is.
    { echo 'RESET BINARY LOGS AND GTIDS;'; cat "$dump"; } | replica_client || die "loading the dump into $(replica_name) failed"
    replica_client -e "SET SESSION sql_log_bin = 0; FLUSH PRIVILEGES;
      CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=$source_port, SOURCE_USER='$TB_STACK_REPL_USER',
        SOURCE_PASSWORD='$TB_STACK_REPL_PASSWORD', SOURCE_SSL=1, SOURCE_SSL_CA='$TB_STACK_TLS_DIR/ca.pem', SOURCE_SSL_VERIFY_SERVER_CERT=1,
        SOURCE_AUTO_POSITION=1;
      START REPLICA;" || die "could not start replicating on $(replica_name)"
  fi
  rm -f "$dump"
  touch "$(replica_data)/.timebucket-seeded"
}

# replica_start: initialise, launch and seed the replica once; start it again (it resumes) after.
replica_start() {
  local name cnf; name=$(replica_name); cnf="$TB_STACK_HOME/conf/$name.cnf"
  if is_running "$name" && replica_healthy; then log "$name already up on :$TB_STACK_REPLICA_PORT"; return 0; fi
  port_free_for "$name" "$TB_STACK_REPLICA_PORT"
  if [[ $(replica_flavour) == mariadb ]]; then mariadb_healthy "$(replica_source)"; else mysql_healthy "$(replica_source)"; fi ||
    die "$name needs server $(replica_source) up (make stack-up first)"
  replica_config "$cnf"
  local data; data=$(replica_data)
  # A datadir whose seeding did not finish is made again.
  [[ -f "$data/.timebucket-seeded" ]] || rm -rf "$data" "$data-binlog"
  mkdir -p "$data-binlog" "$TB_STACK_HOME/run" "$TB_STACK_HOME/logs" "$TB_STACK_HOME/tmp/$name"
  if [[ ! -d "$data/mysql" ]]; then
    log "initialising $name datadir"
    if [[ $(replica_flavour) == mariadb ]]; then
      mariadb-install-db --defaults-file="$cnf" --user="$(id -un)" --auth-root-authentication-method=socket --skip-test-db \
        >"$(log_file "$name-install")" 2>&1 || die "mariadb-install-db failed for $name (log: $(log_file "$name-install"))"
    else
      mysql_tree_run usr/sbin/mysqld --defaults-file="$cnf" --initialize-insecure --user="$(id -un)" \
        >"$(log_file "$name-install")" 2>&1 || die "mysqld --initialize failed for $name (log: $TB_STACK_HOME/logs/$name-error.log)"
    fi
  fi
  log "starting $name (replica of server $(replica_source), $(replica_flavour)) on :$TB_STACK_REPLICA_PORT"
  if [[ $(replica_flavour) == mariadb ]]; then
    launch "$name" mariadbd --defaults-file="$cnf" --user="$(id -un)"
  else
    launch "$name" "$(mysql_tree_loader)" --library-path "$(mysql_tree_library_path)" "$TB_MYSQL_TREE/usr/sbin/mysqld" --defaults-file="$cnf" --user="$(id -un)"
  fi
  wait_until "$name" "$TB_START_TIMEOUT_SECONDS" replica_healthy
  if [[ ! -f "$data/.timebucket-seeded" ]]; then
    log "seeding $name from a dump of server $(replica_source)"
    replica_seed
  fi
  wait_until "$name" 60 replica_running
}

# The I/O and SQL threads both running.
replica_running() { [[ $(replica_threads) == 'Yes Yes' ]]; }

replica_threads() {
  local status
  status=$(replica_client -E -e "$(if [[ $(replica_flavour) == mariadb ]]; then echo 'SHOW SLAVE STATUS'; else echo 'SHOW REPLICA STATUS'; fi)" 2>/dev/null) || return 0
  echo "$(awk -F': ' '/ (Slave|Replica)_IO_Running:/ { print $2 }' <<<"$status") $(awk -F': ' '/ (Slave|Replica)_SQL_Running:/ { print $2 }' <<<"$status")"
}

# replica_sql_thread stop|start: the SQL (apply) thread alone, so the replica falls behind while
# still receiving (the replica-lag test).
replica_sql_thread() {
  case $1 in
    stop | start) ;;
    *) die "replica sql-thread: stop or start" ;;
  esac
  if [[ $(replica_flavour) == mariadb ]]; then replica_client -e "${1^^} SLAVE SQL_THREAD"; else replica_client -e "${1^^} REPLICA SQL_THREAD"; fi
}

replica_stop() { stop_component "$(replica_name)"; }

# Its line in `make stack-status`: off (not asked for, not running) is no failure; down when asked for.
replica_status() {
  local name threads; name=$(replica_name)
  if is_running "$name" && replica_healthy; then
    threads=$(replica_threads)
    printf '%-9s %s 127.0.0.1:%s  %s replica of server %s (:%s), io/sql running: %s\n' "$name" \
      "$([[ $threads == 'Yes Yes' ]] && echo 'up   ' || echo 'degraded')" "$TB_STACK_REPLICA_PORT" "$(replica_flavour)" \
      "$(replica_source)" "$(db_port "$(replica_source)")" "${threads/ //}"
  elif [[ $TB_STACK_REPLICA == 1 ]]; then
    printf '%-9s down\n' "$name"
  else
    printf '%-9s off   (TB_STACK_REPLICA=0; stack/stack.sh replica up starts it)\n' "$name"
  fi
}
