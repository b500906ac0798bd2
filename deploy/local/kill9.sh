#!/usr/bin/env bash
# Crash simulation for fault tests: SIGKILL one engine by its recorded PID and wait until it is
# gone. Its data directory is kept, so `up.sh <engine>` restarts it on the same data.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [[ $# -ne 1 ]]; then
  echo "usage: kill9.sh <engine>   (one of: ${ALL_ENGINES[*]})" >&2
  exit 2
fi
engine="$(select_engines "$1")"
if ! pid="$(live_pid "$engine")"; then
  echo "kill9: $engine is not running under these scripts (no live recorded PID)" >&2
  rm -f "$(pid_file "$engine")"
  exit 1
fi
kill -KILL "$pid"
while pid_alive "$pid"; do sleep 0.05; done
rm -f "$(pid_file "$engine")"
echo "kill9: $engine pid $pid killed"
