#!/usr/bin/env bash
# Starts the local engines (all, or the ones named: redis temporal neo4j opensearch), each bound
# to 127.0.0.1, with its data, log and PID file under .engines/<engine>/. An engine that is
# already healthy on its port is reused. Exits non-zero, with the log tail, if one fails to start.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

engine_list="$(select_engines "$@")"
mapfile -t engines <<<"$engine_list"
bash "$DEPLOY_DIR/fetch.sh" "${engines[@]}"

# Health-check budgets for a loaded 2-core machine.
declare -A READY_TIMEOUT=([redis]=15 [temporal]=60 [neo4j]=120 [opensearch]=180)

fail() {
  local engine="$1" message="$2" log
  log="$(log_file "$engine")"
  echo "up: $engine: $message" >&2
  if [[ -f $log ]]; then
    echo "---- last 40 lines of $log ----" >&2
    tail -n 40 "$log" >&2
  fi
  exit 1
}

require_free_port() {
  local engine="$1" port="$2" what="$3"
  if port_open "$port"; then
    fail "$engine" "$what port 127.0.0.1:$port is already in use by another program (override it with the matching *_PORT variable)"
  fi
}

# Runs a command detached from this shell (own session, stdin from /dev/null, output to the log)
# and records its PID; the command must exec the engine itself so the PID is the engine's.
launch() {
  local engine="$1"
  shift
  local log
  log="$(log_file "$engine")"
  echo "==== $(date -Is) starting: $*" >>"$log"
  setsid "$@" </dev/null >>"$log" 2>&1 &
  echo $! >"$(pid_file "$engine")"
}

wait_ready() {
  local engine="$1" started="${LAUNCHED_AT[$1]}" pid version
  pid="$(cat "$(pid_file "$engine")")"
  while true; do
    if version="$(engine_health "$engine")"; then
      printf 'up: %-10s ready in %3ss  pid %-7s %s\n' "$engine" $((SECONDS - started)) "$pid" "$version"
      return
    fi
    if ! pid_alive "$pid"; then
      rm -f "$(pid_file "$engine")"
      fail "$engine" "process $pid exited during startup"
    fi
    if (( SECONDS - started >= READY_TIMEOUT[$engine] )); then
      fail "$engine" "not healthy after ${READY_TIMEOUT[$engine]}s (pid $pid left running; stop it with down.sh $engine)"
    fi
    sleep 0.5
  done
}

start_redis() {
  local dir="$ENGINES_DIR/redis"
  require_free_port redis "$REDIS_PORT" Redis
  # AOF with fsync every second; no RDB snapshots. Foreground mode so the recorded PID is Redis.
  launch redis redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --protected-mode yes \
    --dir "$dir" --appendonly yes --appendfsync everysec --save "" --daemonize no \
    --logfile "" --pidfile ""
}

start_temporal() {
  local dir="$ENGINES_DIR/temporal"
  require_free_port temporal "$TEMPORAL_PORT" "Temporal gRPC"
  require_free_port temporal "$TEMPORAL_UI_PORT" "Temporal UI"
  launch temporal "$TEMPORAL_BIN" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_PORT" \
    --ui-ip 127.0.0.1 --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$dir/temporal.sqlite" \
    --namespace "$TEMPORAL_NAMESPACE" \
    --log-level warn
}

start_neo4j() {
  local dir="$ENGINES_DIR/neo4j"
  require_free_port neo4j "$NEO4J_BOLT_PORT" "Neo4j Bolt"
  mkdir -p "$dir/home"
  rm -f "$dir/version"
  # The --add-opens set is the one Neo4j 5's own neo4j.conf gives its server JVM.
  launch neo4j "$JAVA17" -Xms"$NEO4J_HEAP" -Xmx"$NEO4J_HEAP" -XX:+UseG1GC \
    -XX:+ExitOnOutOfMemoryError \
    --add-opens=java.base/java.nio=ALL-UNNAMED \
    --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
    --add-opens=java.base/java.lang=ALL-UNNAMED \
    --enable-native-access=ALL-UNNAMED \
    -Dio.netty.tryReflectionSetAccessible=true \
    -cp "$dir/build/classes:$dir/lib/*" \
    mempalace.local.Neo4jLauncher "$dir/home" "$NEO4J_BOLT_PORT" "$dir/version"
}

start_opensearch() {
  local dir="$ENGINES_DIR/opensearch"
  require_free_port opensearch "$OPENSEARCH_PORT" "OpenSearch HTTP"
  mkdir -p "$dir/config" "$dir/home"
  { cat "$DEPLOY_DIR/opensearch/opensearch.yml"; echo "transport.port: $OPENSEARCH_TRANSPORT_PORT"; } \
    >"$dir/config/opensearch.yml"
  # The runner gives node n the HTTP port base+n, so base = port - 1. jdk.incubator.vector lets
  # Lucene use SIMD for vector distances and postings (the official images add it too); Lucene's
  # memory-mapped index files and native madvise calls need native access without a warning.
  launch opensearch "$OPENSEARCH_JAVA_HOME/bin/java" -Xms"$OPENSEARCH_HEAP" -Xmx"$OPENSEARCH_HEAP" \
    -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Dfile.encoding=UTF-8 \
    -Dlog4j2.formatMsgNoLookups=true --add-modules=jdk.incubator.vector \
    --enable-native-access=ALL-UNNAMED \
    -cp "$dir/build/classes:$dir/lib/*:$dir/knn/*" \
    mempalace.local.OpenSearchLauncher \
    -basePath "$dir/home" -confPath "$dir/config" \
    -numOfNode 1 -baseHttpPort $((OPENSEARCH_PORT - 1)) -clusterName mempalace-local \
    -pluginTypes org.opensearch.knn.plugin.KNNPlugin
}

# Launch every engine that is not already up, then wait for each: the two JVMs starting side by
# side were ready sooner than one after the other on 2 cores (measured, see README.md).
declare -A LAUNCHED_AT=()
launched=()
for engine in "${engines[@]}"; do
  mkdir -p "$ENGINES_DIR/$engine"
  if version="$(engine_health "$engine")"; then
    if pid="$(live_pid "$engine")"; then
      printf 'up: %-10s already running  pid %-7s %s\n' "$engine" "$pid" "$version"
    else
      printf 'up: %-10s already healthy on port %s (not started by these scripts)  %s\n' "$engine" "$(engine_port "$engine")" "$version"
    fi
    continue
  fi
  if pid="$(live_pid "$engine")"; then
    fail "$engine" "pid $pid from an earlier start is alive but not healthy on port $(engine_port "$engine") (hung, or started with other ports); run down.sh $engine first"
  fi
  rm -f "$(pid_file "$engine")"
  "start_$engine"
  LAUNCHED_AT[$engine]=$SECONDS
  launched+=("$engine")
done
for engine in "${launched[@]}"; do
  wait_ready "$engine"
done
