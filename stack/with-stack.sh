#!/usr/bin/env bash
# with-stack.sh CMD...: run CMD against the local stack. Starts the stack if it is not up and,
# in that case, stops it afterwards whatever CMD's outcome (all of it: `down` stops the second
# MariaDB server with the first); exits with CMD's status.
set -uo pipefail
here="$(dirname "${BASH_SOURCE[0]}")"
if bash "$here/stack.sh" status >/dev/null 2>&1; then
  exec "$@"
fi
trap 'bash "$here/stack.sh" down' EXIT
bash "$here/stack.sh" up || exit 1
"$@"
