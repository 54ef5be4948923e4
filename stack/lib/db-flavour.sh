# Which server each of the stack's database instances runs (TB_DB_FLAVOUR, stack/env.sh):
#   mariadb  every instance MariaDB (the default)
#   mysql    every instance MySQL (stack/lib/mysql.sh)
#   mixed    instance 1 MariaDB, instance 2 MySQL: one entity over both servers, as a move from
#            one to the other runs
# Instance i listens on the same port whatever its server (TB_STACK_DB_PORT, TB_STACK_DB2_PORT),
# so a client configured for the stack reaches it by port alone; each server keeps its own data
# directory, so switching the flavour keeps both servers' data.

case $TB_DB_FLAVOUR in
  mariadb | mysql) ;;
  mixed) [[ $TB_DB_SERVERS == 2 ]] || die "TB_DB_FLAVOUR=mixed needs TB_DB_SERVERS=2 (is '$TB_DB_SERVERS')" ;;
  *) die "TB_DB_FLAVOUR must be mariadb, mysql or mixed (is '$TB_DB_FLAVOUR')" ;;
esac
[[ $TB_DB_SERVERS == [12] ]] || die "TB_DB_SERVERS must be 1 or 2 (is '$TB_DB_SERVERS')"

db_instances() { seq 1 "$TB_DB_SERVERS"; }
db_port() { if (($1 == 1)); then echo "$TB_STACK_DB_PORT"; else echo "$TB_STACK_DB2_PORT"; fi; }
db_flavour() {
  case $TB_DB_FLAVOUR in
    mixed) if (($1 == 1)); then echo mariadb; else echo mysql; fi ;;
    *) echo "$TB_DB_FLAVOUR" ;;
  esac
}
# db_instances_of FLAVOUR: the instances that run FLAVOUR's server.
db_instances_of() {
  local i
  for i in $(db_instances); do [[ $(db_flavour "$i") == "$1" ]] && echo "$i"; done
  return 0
}

# db_bootstrap_sql AUTH CDC_GRANTS: the SQL that makes an instance the stack's, on either server:
# the database; the owner user (migrations, the tests, make run), which may grant on its
# databases; the service user, with no privilege until `timebucket migrate` (TB_DB_SERVICE_USER)
# grants it what the running service needs (src/db/service-grants.ts); an owner-like account
# admitted over TLS only (the tests of TB_DB_TLS prove with it that a connection really is
# encrypted); the CDC user with CDC_GRANTS on *.*. AUTH goes after IDENTIFIED (`WITH <plugin>`,
# or nothing for the server's default). The same on every instance, so a client configured for
# one server can use the other by its port alone. Safe to re-run: every statement is IF NOT
# EXISTS or a GRANT.
db_bootstrap_sql() {
  local auth=$1 cdc=$2 host
  echo "CREATE DATABASE IF NOT EXISTS \`$TB_DB_NAME\`;"
  for host in % localhost; do
    echo "CREATE USER IF NOT EXISTS '$TB_DB_USER'@'$host' IDENTIFIED $auth BY '$TB_DB_PASSWORD';"
    echo "GRANT ALL PRIVILEGES ON \`$TB_DB_NAME\`.* TO '$TB_DB_USER'@'$host' WITH GRANT OPTION;"
    echo "GRANT ALL PRIVILEGES ON \`${TB_DB_NAME}_test%\`.* TO '$TB_DB_USER'@'$host' WITH GRANT OPTION;"
    echo "CREATE USER IF NOT EXISTS '$TB_DB_SERVICE_USER'@'$host' IDENTIFIED $auth BY '$TB_DB_SERVICE_PASSWORD';"
    echo "CREATE USER IF NOT EXISTS '$TB_CDC_USER'@'$host' IDENTIFIED $auth BY '$TB_CDC_PASSWORD';"
    echo "GRANT $cdc ON *.* TO '$TB_CDC_USER'@'$host';"
  done
  echo "CREATE USER IF NOT EXISTS '$TB_STACK_DB_TLS_USER'@'%' IDENTIFIED $auth BY '$TB_STACK_DB_TLS_PASSWORD' REQUIRE SSL;"
  echo "GRANT ALL PRIVILEGES ON \`$TB_DB_NAME\`.* TO '$TB_STACK_DB_TLS_USER'@'%' WITH GRANT OPTION;"
  echo "FLUSH PRIVILEGES;"
}
