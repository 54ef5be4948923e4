#!/usr/bin/env bash
# Installs what the local stack needs, idempotently:
#  - Debian packages (MariaDB server/client, curl, envsubst) when missing;
#  - Kafka broker + Connect jars and Debezium's MariaDB and MySQL connectors, resolved by Maven from
#    Maven Central into $TB_STACK_LIB (.stack/lib);
#  - Apicurio Registry's runnable Quarkus app, unpacked into $TB_STACK_LIB/apicurio;
#  - timebucket's Connect predicate (stack/connect-smt), built with Maven into the plugin path;
#  - MySQL 9.7 from Debian's sid suite, in a tree of its own made with debootstrap (once per
#    machine, stack/lib/mysql-tree.sh), when TB_DB_FLAVOUR puts a MySQL server in the stack;
#  - promtool, prometheus and kubectl (for `kubectl kustomize`), unpacked from Debian's packages
#    into $TB_STACK_LIB/tools: no service is installed or started.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
source "$TB_ROOT/stack/lib/common.sh"
source "$TB_ROOT/stack/lib/db-flavour.sh"
source "$TB_ROOT/stack/lib/mysql-tree.sh"

install_debian_packages() {
  local missing=()
  command -v mariadbd >/dev/null || [[ -x /usr/sbin/mariadbd ]] || missing+=(mariadb-server)
  command -v mariadb >/dev/null || missing+=(mariadb-client)
  command -v curl >/dev/null || missing+=(curl)
  command -v envsubst >/dev/null || missing+=(gettext-base)
  command -v java >/dev/null || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null || missing+=(maven)
  ((${#missing[@]} == 0)) && return 0
  log "installing Debian packages: ${missing[*]}"
  [[ $(id -u) -eq 0 ]] || die "need root to install ${missing[*]} (or install them yourself)"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# resolve_jars POM OUT [EXTRA_ARGS...]: copy the POM's dependency closure into OUT, once per POM
# content (a stamp holds the POM's checksum, so a version bump re-resolves).
resolve_jars() {
  local pom=$1 out=$2; shift 2
  local stamp="$out/.pom.sha1" sum
  sum=$(sha1sum "$pom" | cut -d' ' -f1)
  [[ -f "$stamp" && $(cat "$stamp") == "$sum" ]] && return 0
  log "resolving $(basename "$(dirname "$pom")") jars with Maven"
  rm -rf "$out" && mkdir -p "$out"
  mvn_quiet -f "$pom" dependency:copy-dependencies -DoutputDirectory="$out" "$@" \
    || die "maven could not resolve $pom"
  echo "$sum" >"$stamp"
}

install_apicurio() {
  local out="$TB_STACK_LIB/apicurio"
  [[ -f "$out/.version" && $(cat "$out/.version") == "$TB_APICURIO_VERSION" ]] && return 0
  log "resolving Apicurio Registry $TB_APICURIO_VERSION with Maven"
  local artifact="io.apicurio:apicurio-registry-app:$TB_APICURIO_VERSION:tar.gz:all"
  local downloads="$TB_STACK_LIB/downloads"
  mvn_quiet dependency:copy -Dartifact="$artifact" -DoutputDirectory="$downloads" || die "maven could not fetch $artifact"
  rm -rf "$out" && mkdir -p "$out"
  tar -xzf "$downloads/apicurio-registry-app-$TB_APICURIO_VERSION-all.tar.gz" -C "$out"
  echo "$TB_APICURIO_VERSION" >"$out/.version"
}

# Maven 3.8 (Debian's) writes ANSI resets on both streams even in batch mode with colours off:
# they are dropped, so that the stack's next line starts clean. Its exit status is kept.
mvn_quiet() { mvn -B -q -Dstyle.color=never "$@" > >(strip_ansi) 2> >(strip_ansi >&2); }
strip_ansi() { sed -u $'s/\e\\[[0-9;]*m//g'; }

# The CDC filter's predicate: rebuilt when its POM or sources change (a stamp holds their checksum).
# It goes on the Connect worker's classpath, not its plugin path: the standalone worker computes
# the task configs of a connector created through the REST API on a thread whose class loader
# sees the classpath only, and a predicate it cannot load there leaves the connector without
# tasks, silently (the request times out). Debezium stays on the plugin path.
install_connect_smt() {
  local src="$TB_ROOT/stack/connect-smt" out="$TB_STACK_LIB/connect-classpath/timebucket-smt"
  rm -rf "$TB_STACK_LIB/connect-plugins/timebucket-smt"
  local sum
  sum=$(cd "$src" && find pom.xml src -type f | sort | xargs sha1sum | sha1sum | cut -d' ' -f1)
  [[ -f "$out/.src.sha1" && $(cat "$out/.src.sha1") == "$sum" ]] && return 0
  log "building the Connect predicate (stack/connect-smt) with Maven"
  local build="$TB_STACK_LIB/build/connect-smt"
  mvn_quiet -f "$src/pom.xml" package -Dtb.build.dir="$build" || die "maven could not build stack/connect-smt"
  rm -rf "$out" && mkdir -p "$out"
  cp "$build"/timebucket-connect-smt-*.jar "$out/"
  echo "$sum" >"$out/.src.sha1"
}

# The deployment checks' tools (test/deploy): the binaries of Debian's prometheus and
# kubernetes-client packages, extracted rather than installed, so no service starts with them.
DEPLOY_TOOL_PACKAGES=(prometheus kubernetes-client)
install_deploy_tools() {
  local out="$TB_STACK_LIB/tools" dl="$TB_STACK_LIB/downloads/deb"
  [[ -f "$out/.packages" && $(cat "$out/.packages") == "${DEPLOY_TOOL_PACKAGES[*]}" ]] && return 0
  log "unpacking ${DEPLOY_TOOL_PACKAGES[*]} from Debian's packages"
  rm -rf "$dl" && mkdir -p "$dl"
  if ! (cd "$dl" && apt-get download -qq "${DEPLOY_TOOL_PACKAGES[@]}" 2>/dev/null); then
    [[ $(id -u) -eq 0 ]] || die "apt-get download ${DEPLOY_TOOL_PACKAGES[*]} failed (run apt-get update as root)"
    apt-get update -qq && (cd "$dl" && apt-get download -qq "${DEPLOY_TOOL_PACKAGES[@]}") || die "apt-get download ${DEPLOY_TOOL_PACKAGES[*]} failed"
  fi
  rm -rf "$out" && mkdir -p "$out"
  local deb
  for deb in "$dl"/*.deb; do dpkg -x "$deb" "$out"; done
  for tool in promtool prometheus kubectl; do [[ -x "$out/usr/bin/$tool" ]] || die "$tool missing from ${DEPLOY_TOOL_PACKAGES[*]}"; done
  echo "${DEPLOY_TOOL_PACKAGES[*]}" >"$out/.packages"
}

install_debian_packages
mkdir -p "$TB_STACK_LIB"
install_deploy_tools
resolve_jars "$TB_ROOT/stack/maven/kafka/pom.xml" "$TB_STACK_LIB/kafka"
# Kafka's own classes come from the worker's classpath; a second copy in the plugin folder
# would be loaded by the plugin's class loader and clash.
rm -rf "$TB_STACK_LIB/connect-plugins/debezium-mariadb"
resolve_jars "$TB_ROOT/stack/maven/debezium/pom.xml" "$TB_STACK_LIB/connect-plugins/debezium" \
  -DexcludeGroupIds=org.apache.kafka,org.slf4j
install_apicurio
install_connect_smt
# MySQL's tree (stack/lib/mysql-tree.sh) only when a server of this stack runs MySQL.
[[ -z $(db_instances_of mysql) ]] || mysql_tree_ensure
log "stack installed under $TB_STACK_LIB"
