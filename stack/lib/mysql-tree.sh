# The MySQL server the stack runs (TB_DB_FLAVOUR mysql or mixed, stack/lib/db-flavour.sh) comes
# from Debian's archive: its `sid` suite ships MySQL 9.7 LTS (mysql-server-core), built against a
# newer C library than Debian 12's. So it lives in a minimal sid tree of its own, made once with
# debootstrap into a cache outside the clone (TB_MYSQL_TREE) and reused by every checkout and
# stack; a tree without its stamp (an interrupted build) is made again. The server runs from the
# tree through the tree's own dynamic loader (stack/lib/mysql.sh), not in a chroot: its data,
# sockets and logs stay in the stack home like MariaDB's, and no mount is needed.

MYSQL_TREE_PACKAGES=(mysql-server-core mysql-client-core)
MYSQL_TREE_STAMP="$TB_MYSQL_TREE/.timebucket-tree"

mysql_tree_ok() {
  [[ -f "$MYSQL_TREE_STAMP" && $(cat "$MYSQL_TREE_STAMP") == "${MYSQL_TREE_PACKAGES[*]}" ]] &&
    [[ -x "$TB_MYSQL_TREE/usr/sbin/mysqld" && -x "$TB_MYSQL_TREE/usr/bin/mysql" ]]
}

# mysql_tree_ensure: the tree, made when missing or broken (about 40 s and 600 MB here; longer on a slow mirror). Under a
# lock beside the tree: `make test` starts two stacks at once, and two builds of one tree would
# each remove the other's (and race for apt's own lock while installing debootstrap).
mysql_tree_ensure() {
  mysql_tree_ok && return 0
  mkdir -p "$(dirname "$TB_MYSQL_TREE")"
  (
    flock 9 || die "could not lock $TB_MYSQL_TREE for its build"
    mysql_tree_ok && exit 0
    mysql_tree_build
  ) 9>"$TB_MYSQL_TREE.lock" || die "the MySQL tree could not be made"
}

mysql_tree_build() {
  [[ $(id -u) -eq 0 ]] || die "making the MySQL tree needs root (debootstrap, chroot): run as root once, or set TB_MYSQL_TREE to a tree made so"
  command -v debootstrap >/dev/null || {
    log "installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || die "could not install debootstrap"
  }
  local tree=$TB_MYSQL_TREE
  log "making the MySQL tree (Debian sid, ${MYSQL_TREE_PACKAGES[*]}) in $tree"
  mysql_tree_unmount
  rm -rf "$tree"
  mkdir -p "$(dirname "$tree")"
  local out; out="$(dirname "$tree")/mysql-tree-build.log"
  debootstrap --variant=minbase sid "$tree" "$TB_DEBIAN_MIRROR" >"$out" 2>&1 || { tail -20 "$out" >&2; die "debootstrap failed (log: $out)"; }
  # The tree resolves names as this machine does; the archive may be a dated snapshot, whose
  # Release file apt would otherwise refuse as expired.
  cp /etc/hosts /etc/resolv.conf "$tree/etc/" 2>/dev/null || true
  printf 'Acquire::Check-Valid-Until "false";\nAcquire::Check-Date "false";\n' >"$tree/etc/apt/apt.conf.d/99timebucket"
  {
    chroot "$tree" apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive chroot "$tree" apt-get install -y -qq --no-install-recommends "${MYSQL_TREE_PACKAGES[@]}"
  } >>"$out" 2>&1 || { mysql_tree_unmount; tail -20 "$out" >&2; die "installing ${MYSQL_TREE_PACKAGES[*]} in the tree failed (log: $out)"; }
  mysql_tree_unmount
  chroot "$tree" apt-get clean >/dev/null 2>&1 || true
  echo "${MYSQL_TREE_PACKAGES[*]}" >"$MYSQL_TREE_STAMP"
  log "MySQL tree ready: $("$(mysql_tree_loader)" --library-path "$(mysql_tree_library_path)" "$tree/usr/sbin/mysqld" --version 2>/dev/null)"
}

# Package scripts in the chroot can leave /proc or /dev mounted; rm -rf must never descend into them.
mysql_tree_unmount() {
  local m
  for m in $(awk -v t="$TB_MYSQL_TREE/" 'index($2, t) == 1 { print $2 }' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
}

# The tree's loader, by its real path: /lib64 in the tree is an absolute symlink, which would
# resolve to this machine's loader.
mysql_tree_loader() { echo "$TB_MYSQL_TREE/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"; }
mysql_tree_library_path() { echo "$TB_MYSQL_TREE/usr/lib/x86_64-linux-gnu:$TB_MYSQL_TREE/usr/lib/mysql/private"; }

# mysql_tree_run BINARY ARGS...: a binary of the tree (usr/sbin/mysqld, usr/bin/mysql) with the tree's libraries.
mysql_tree_run() {
  local bin=$1; shift
  "$(mysql_tree_loader)" --library-path "$(mysql_tree_library_path)" "$TB_MYSQL_TREE/$bin" "$@"
}
