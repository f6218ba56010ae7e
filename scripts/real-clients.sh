#!/usr/bin/env bash
# The library stacks against the real libraries on this machine (loopback
# only): installs botocore (current and 1.43) and grpcio with pip into
# virtual environments, runs them against local servers, runs the same
# setups in csmacd, and fails unless they agree (scripts/real_clients.py
# says how). Prints the table docs/stacks.md shows.
#
#   CSMACD=target/debug/csmacd scripts/real-clients.sh
#
# Where pip cannot install the libraries (no network, no venv), it says so
# loudly and exits 0; any disagreement exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
CSMACD="${CSMACD:-target/debug/csmacd}"
BOTOCORE="${BOTOCORE:-1.44.8}"
BOTOCORE_143="${BOTOCORE_143:-1.43.127}"
GRPCIO="${GRPCIO:-1.85.3}"
VENVS="${REAL_CLIENTS_VENVS:-${TMPDIR:-/tmp}/csmacd-real-clients}"
PY="${PYTHON:-python3}"

skip() {
  echo "=================================================================" >&2
  echo "SKIPPED scripts/real-clients.sh: $1" >&2
  echo "(the library stacks were NOT checked against botocore and grpcio)" >&2
  echo "=================================================================" >&2
  exit 0
}

command -v "$PY" >/dev/null || skip "no $PY"
[ -x "$CSMACD" ] || { echo "error: no csmacd binary at $CSMACD (build it, or set CSMACD)" >&2; exit 1; }
make_venv() { # dir, packages...
  local dir="$1"; shift
  if [ ! -x "$dir/bin/python" ] || ! "$dir/bin/pip" show -q "$@" >/dev/null 2>&1; then
    rm -rf "$dir"
    "$PY" -m venv "$dir" >/dev/null 2>&1 || return 1
  fi
  "$dir/bin/pip" install -q --disable-pip-version-check "$@" >&2 || return 1
}
make_venv "$VENVS/current" "botocore==$BOTOCORE" "grpcio==$GRPCIO" \
  || skip "pip cannot install botocore==$BOTOCORE and grpcio==$GRPCIO"
make_venv "$VENVS/botocore-1.43" "botocore==$BOTOCORE_143" \
  || skip "pip cannot install botocore==$BOTOCORE_143"
exec "$PY" scripts/real_clients.py check "$CSMACD" \
  "1.44=$VENVS/current/bin/python" "1.43=$VENVS/botocore-1.43/bin/python"
