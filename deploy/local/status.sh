#!/usr/bin/env bash
# One line per engine: state, PID, address and the version the engine reports.
# Exits 0 when every engine is healthy, 1 otherwise.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

all_healthy=0
for engine in "${ALL_ENGINES[@]}"; do
  port="$(engine_port "$engine")"
  pid="$(live_pid "$engine" || echo -)"
  if version="$(engine_health "$engine")"; then
    state=healthy
  elif [[ $pid != - ]]; then
    state=starting/unhealthy
    version=
    all_healthy=1
  else
    state=down
    version=
    all_healthy=1
  fi
  printf '%-10s %-18s pid %-7s 127.0.0.1:%-5s %s\n' "$engine" "$state" "$pid" "$port" "$version"
done
exit "$all_healthy"
