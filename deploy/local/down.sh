#!/usr/bin/env bash
# Stops the local engines (all, or the ones named) by the PID recorded at start: TERM, then
# KILL after a grace period. Never matches processes by name. Removes stale PID files.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

engine_list="$(select_engines "$@")"
mapfile -t engines <<<"$engine_list"
# Seconds each engine gets for a clean shutdown before KILL.
declare -A GRACE=([redis]=15 [temporal]=20 [neo4j]=60 [opensearch]=60)

# Reverse start order: the JVMs first, Redis last.
for ((i = ${#engines[@]} - 1; i >= 0; i--)); do
  engine="${engines[$i]}"
  file="$(pid_file "$engine")"
  if pid="$(live_pid "$engine")"; then
    started=$SECONDS
    stop_pid "$pid" "${GRACE[$engine]}"
    printf 'down: %-10s stopped pid %s in %ss\n' "$engine" "$pid" $((SECONDS - started))
  elif [[ -f $file ]]; then
    printf 'down: %-10s not running (removed stale PID file)\n' "$engine"
  else
    printf 'down: %-10s not running\n' "$engine"
  fi
  rm -f "$file"
  if port_open "$(engine_port "$engine")"; then
    printf 'down: %-10s note: port %s is still served by a process these scripts did not start\n' "$engine" "$(engine_port "$engine")"
  fi
done
