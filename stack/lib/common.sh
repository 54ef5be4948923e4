# Shared helpers for the stack scripts: logging, pid files, bounded waits, process cleanup.

log() { printf '[stack %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

pid_file() { echo "$TB_STACK_HOME/run/$1.pid"; }
log_file() { echo "$TB_STACK_HOME/logs/$1.log"; }

# is_running NAME: the component's recorded process is alive.
is_running() {
  local f; f=$(pid_file "$1")
  [[ -f "$f" ]] && kill -0 "$(cat "$f")" 2>/dev/null
}

# launch NAME CMD...: start CMD in its own session (so stop can signal the whole group),
# output to the component's log, pid recorded.
launch() {
  local name=$1; shift
  mkdir -p "$TB_STACK_HOME/run" "$TB_STACK_HOME/logs"
  setsid "$@" >>"$(log_file "$name")" 2>&1 < /dev/null &
  echo $! >"$(pid_file "$name")"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# port_free_for NAME PORT: dies when PORT already answers while NAME is not up, naming what to do:
# most often the other server of the same instance (a stack started with another TB_DB_FLAVOUR).
port_free_for() {
  port_open "$2" || return 0
  die "$1 cannot start: port $2 is already taken (a stack started with another TB_DB_FLAVOUR? stop it with 'make stack-down' under that flavour)"
}

# wait_until NAME SECONDS CHECK...: poll CHECK once a second until it succeeds; fail with the
# tail of the component's log when the process died or the deadline passed.
wait_until() {
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    if ! is_running "$name"; then
      tail -n 40 "$(log_file "$name")" >&2 || true
      die "$name exited during start-up (log: $(log_file "$name"))"
    fi
    if ((SECONDS >= deadline)); then
      tail -n 40 "$(log_file "$name")" >&2 || true
      die "$name not healthy after ${seconds}s (log: $(log_file "$name"))"
    fi
    sleep 1
  done
}

# stop_component NAME...: TERM each one's process group at once, wait up to 30 s for all, then
# KILL what is left. At once matters for a KRaft cluster: nodes stopped one after another lose
# their quorum, and the last ones then wait out their controlled shutdown in vain.
stop_component() {
  local name f pid pids=() names=()
  for name in "$@"; do
    f=$(pid_file "$name")
    [[ -f "$f" ]] || continue
    pid=$(cat "$f")
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping $name (pid $pid)"
      kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
      pids+=("$pid")
      names+=("$name")
    fi
    rm -f "$f"
  done
  local deadline=$((SECONDS + 30)) i
  for i in "${!pids[@]}"; do
    while kill -0 "${pids[$i]}" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.5; done
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      log "${names[$i]} did not stop in 30s; killing"
      kill -KILL -- "-${pids[$i]}" 2>/dev/null || kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
  done
}

# Every process the stack starts carries its stack home in its command line (a JVM as
# -Dtimebucket.stack=<home>/, MariaDB in its --defaults-file), so this finds leftovers even when
# a pid file was lost, and never another stack's processes (they share the jars in TB_STACK_LIB).
stack_processes() { pgrep -f -- "(-Dtimebucket\.stack=|--defaults-file=)$TB_STACK_HOME/" || true; }

# render TEMPLATE OUT: substitute the TB_* variables of env.sh into a checked-in config template.
render() {
  mkdir -p "$(dirname "$2")"
  envsubst "$(compgen -v TB_ | sed 's/^/$/' | tr '\n' ' ')" <"$1" >"$2"
}
