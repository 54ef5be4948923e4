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
