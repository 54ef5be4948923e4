# Stack settings: every port and path the local stack uses. Sourced by the stack scripts
# and by the Makefile's environment, so tests and the stack agree on where things are.
# Override any of them in the environment (e.g. TB_KAFKA_PORT=29092 make stack-up).

TB_ROOT="${TB_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
# All logs, data and pid files live here; it is git-ignored.
TB_STACK_HOME="${TB_STACK_HOME:-$TB_ROOT/.stack}"
# Downloaded jars, shared by every stack of this checkout (the cluster stack of `make test` too).
TB_STACK_LIB="${TB_STACK_LIB:-$TB_ROOT/.stack/lib}"

# The stack's database servers: TB_DB_SERVERS of them (1 or 2), each MariaDB or MySQL by
# TB_DB_FLAVOUR (stack/lib/db-flavour.sh): mariadb (the default), mysql (both MySQL 9.7), or mixed
# (server 1 MariaDB, server 2 MySQL). Server 1 listens on TB_STACK_DB_PORT, server 2 on
# TB_STACK_DB2_PORT, whichever server it runs. The second is for the tests that run one entity over
# two database servers: its own datadir, binlog and server_id, the same database and accounts.
# 2 by default so `make test` has it; 1 skips it.
TB_DB_FLAVOUR="${TB_DB_FLAVOUR:-mariadb}"
TB_DB_SERVERS="${TB_DB_SERVERS:-2}"
TB_STACK_DB_PORT="${TB_STACK_DB_PORT:-13306}"
TB_STACK_DB2_PORT="${TB_STACK_DB2_PORT:-$((TB_STACK_DB_PORT + 1))}"
# An asynchronous GTID replica of server 1 (stack/lib/replica.sh), on either flavour: 1 makes
# `make stack-up` start it. Off by default: it is a third server (its memory, and a dump of server 1
# to seed it), which `make run` does not need; the test of the replica-lag reader starts it itself
# (`stack/stack.sh replica up`), and `make stack-down` stops it either way.
TB_STACK_REPLICA="${TB_STACK_REPLICA:-0}"
TB_STACK_REPLICA_PORT="${TB_STACK_REPLICA_PORT:-$((TB_STACK_DB_PORT + 2))}"
# Its replication account (REPLICATION SLAVE only), and the account of the service's replica-lag
# reader, which `timebucket migrate` grants SELECT on timebucket_heartbeat alone (TB_DB_REPLICA_USER).
TB_STACK_REPL_USER="${TB_STACK_REPL_USER:-timebucket_repl}"
TB_STACK_REPL_PASSWORD="${TB_STACK_REPL_PASSWORD:-repl-pw-Zt5mW3qe}"
TB_STACK_REPLICA_READER_USER="${TB_STACK_REPLICA_READER_USER:-timebucket_replica_reader}"
TB_STACK_REPLICA_READER_PASSWORD="${TB_STACK_REPLICA_READER_PASSWORD:-reader-pw-Lc8sN4vy}"
# With the stack's replica on, it is the service's replica of the main database, as a deployment
# configures one (TB_DB_REPLICA_HOST; its port and reader account default to the stack's,
# src/config-replicas.ts): `migrate` grants the reader, the expirers beat the heartbeat and pace
# by its lag. Set only then: a replica configured where none runs would be a lag never known.
if [ "$TB_STACK_REPLICA" = 1 ] && [ -z "${TB_DB_REPLICA_HOST:-}" ]; then
  TB_DB_REPLICA_HOST=127.0.0.1
  export TB_DB_REPLICA_HOST
fi
# MySQL comes from Debian's sid suite, in a tree of its own made once by debootstrap and shared
# by every checkout (stack/lib/mysql-tree.sh), from the mirror this machine's apt uses.
TB_MYSQL_TREE="${TB_MYSQL_TREE:-${XDG_CACHE_HOME:-$HOME/.cache}/timebucket/mysql-sid}"
TB_DEBIAN_MIRROR="${TB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
TB_KAFKA_PORT="${TB_KAFKA_PORT:-19092}"
TB_KAFKA_CONTROLLER_PORT="${TB_KAFKA_CONTROLLER_PORT:-19093}"
# Kafka nodes (each broker and KRaft controller). 1 for development; 3 is what production runs:
# replication factor 3 and min.insync.replicas 2 for every topic, so leader moves are real.
# Node i listens on TB_KAFKA_PORT + 10 (i - 1), its controller on TB_KAFKA_CONTROLLER_PORT + 10 (i - 1).
TB_KAFKA_NODES="${TB_KAFKA_NODES:-1}"
# Each node's SASL_SSL listener (SCRAM-SHA-512 over TLS), beside its plaintext one: what a
# deployment's clients connect to. Node i listens on this + 10 (i - 1). Named TB_STACK_* (not
# TB_KAFKA_*): the application reads TB_KAFKA_*, and the stack's plaintext listener stays the
# default for make run and the tests; a test opts in to SASL_SSL explicitly.
TB_STACK_KAFKA_SASL_PORT="${TB_STACK_KAFKA_SASL_PORT:-$((TB_KAFKA_PORT + 2))}"
TB_STACK_KAFKA_SASL_USER="${TB_STACK_KAFKA_SASL_USER:-timebucket}"
TB_STACK_KAFKA_SASL_PASSWORD="${TB_STACK_KAFKA_SASL_PASSWORD:-kafka-pw-Hq4rX8mN}"
# The stack's CA and server certificate (stack/lib/tls.sh), for Kafka's SASL_SSL listener and
# the database servers' TLS; clients verify against $TB_STACK_TLS_DIR/ca.pem.
TB_STACK_TLS_DIR="${TB_STACK_TLS_DIR:-$TB_STACK_HOME/tls}"
TB_STACK_TLS_KEYSTORE_PASSWORD="${TB_STACK_TLS_KEYSTORE_PASSWORD:-stack-keystore-pw}"
TB_CONNECT_PORT="${TB_CONNECT_PORT:-18083}"
TB_REGISTRY_PORT="${TB_REGISTRY_PORT:-18081}"

TB_DB_NAME="${TB_DB_NAME:-timebucket}"
TB_DB_USER="${TB_DB_USER:-timebucket}"
TB_DB_PASSWORD="${TB_DB_PASSWORD:-timebucket}"
# The account the running service should use: least privilege, granted by `timebucket migrate`.
TB_DB_SERVICE_USER="${TB_DB_SERVICE_USER:-timebucket_app}"
TB_DB_SERVICE_PASSWORD="${TB_DB_SERVICE_PASSWORD:-svc-pw-7Qx2vL9k}"
# An account the server admits over TLS only (REQUIRE SSL), for the tests of TB_DB_TLS.
TB_STACK_DB_TLS_USER="${TB_STACK_DB_TLS_USER:-timebucket_tls}"
TB_STACK_DB_TLS_PASSWORD="${TB_STACK_DB_TLS_PASSWORD:-tls-pw-Vb6pK2sW}"
TB_CDC_USER="${TB_CDC_USER:-debezium}"
TB_CDC_PASSWORD="${TB_CDC_PASSWORD:-debezium}"
# Prefix of the CDC topics: Debezium writes <prefix>.<db>.<table>.
TB_CDC_TOPIC_PREFIX="${TB_CDC_TOPIC_PREFIX:-tbcdc}"

# Versions resolved from Maven Central (see stack/maven/*/pom.xml for Kafka and Debezium).
TB_APICURIO_VERSION="${TB_APICURIO_VERSION:-3.0.9}"

# promtool, prometheus and kubectl for the deployment checks (make test-deploy), unpacked from
# Debian's packages by stack/install.sh.
TB_TOOLS_BIN="${TB_TOOLS_BIN:-$TB_STACK_LIB/tools/usr/bin}"

# How long "up" waits for each component to become healthy.
TB_START_TIMEOUT_SECONDS="${TB_START_TIMEOUT_SECONDS:-120}"

# What the application and the tests connect to: every node of the cluster.
# tb_node_addresses PORT: every node's address for a listener whose first node is on PORT.
tb_node_addresses() { local i; for ((i = 0; i < TB_KAFKA_NODES; i++)); do printf '%s127.0.0.1:%d' "$([[ $i -gt 0 ]] && echo ,)" $(($1 + 10 * i)); done; }
TB_KAFKA_BROKERS="${TB_KAFKA_BROKERS:-$(tb_node_addresses "$TB_KAFKA_PORT")}"
TB_KAFKA_REPLICATION_FACTOR=$((TB_KAFKA_NODES >= 3 ? 3 : 1))
TB_KAFKA_MIN_ISR=$((TB_KAFKA_NODES >= 3 ? 2 : 1))
# group.initial.rebalance.delay.ms (stack/conf/kafka.properties): 0, where Kafka's default (and
# the cluster stack's, stack/cluster.env) is 3 s.
TB_KAFKA_INITIAL_REBALANCE_DELAY_MS="${TB_KAFKA_INITIAL_REBALANCE_DELAY_MS:-0}"
TB_STACK_KAFKA_SASL_BROKERS="${TB_STACK_KAFKA_SASL_BROKERS:-$(tb_node_addresses "$TB_STACK_KAFKA_SASL_PORT")}"
# Not left behind: `set -a` (the Makefile's) would export it into every process's environment.
unset -f tb_node_addresses

export TB_ROOT TB_STACK_HOME TB_STACK_LIB TB_STACK_DB_PORT TB_STACK_DB2_PORT TB_DB_SERVERS TB_DB_FLAVOUR TB_MYSQL_TREE TB_DEBIAN_MIRROR TB_KAFKA_PORT TB_KAFKA_CONTROLLER_PORT TB_KAFKA_NODES \
  TB_KAFKA_BROKERS TB_KAFKA_REPLICATION_FACTOR TB_KAFKA_MIN_ISR TB_KAFKA_INITIAL_REBALANCE_DELAY_MS TB_CONNECT_PORT \
  TB_REGISTRY_PORT TB_DB_NAME TB_DB_USER TB_DB_PASSWORD TB_DB_SERVICE_USER TB_DB_SERVICE_PASSWORD TB_CDC_USER TB_CDC_PASSWORD TB_CDC_TOPIC_PREFIX \
  TB_APICURIO_VERSION TB_START_TIMEOUT_SECONDS TB_TOOLS_BIN \
  TB_STACK_KAFKA_SASL_PORT TB_STACK_KAFKA_SASL_USER TB_STACK_KAFKA_SASL_PASSWORD TB_STACK_KAFKA_SASL_BROKERS \
  TB_STACK_TLS_DIR TB_STACK_TLS_KEYSTORE_PASSWORD TB_STACK_DB_TLS_USER TB_STACK_DB_TLS_PASSWORD \
  TB_STACK_REPLICA TB_STACK_REPLICA_PORT TB_STACK_REPL_USER TB_STACK_REPL_PASSWORD TB_STACK_REPLICA_READER_USER TB_STACK_REPLICA_READER_PASSWORD
