#!/usr/bin/env bash
# The connection settings the product reads (core/config.ts) for the local engine stack, honouring
# the same *_PORT overrides as up.sh. `source deploy/local/env.sh` exports them into the current
# shell; running it prints them as export lines.
__mempalace_env_lib="$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=lib.sh
source "$__mempalace_env_lib"
unset __mempalace_env_lib

export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
export TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
export TEMPORAL_NAMESPACE
export OPENSEARCH_URL="http://127.0.0.1:$OPENSEARCH_PORT"
export NEO4J_URI="bolt://127.0.0.1:$NEO4J_BOLT_PORT"
# Auth is disabled on the local Neo4j; any credentials are accepted.
export NEO4J_USER="${NEO4J_USER:-neo4j}"
export NEO4J_PASSWORD="${NEO4J_PASSWORD:-unused-auth-disabled}"

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  for name in REDIS_URL TEMPORAL_ADDRESS TEMPORAL_NAMESPACE OPENSEARCH_URL NEO4J_URI NEO4J_USER NEO4J_PASSWORD; do
    printf 'export %s=%q\n' "$name" "${!name}"
  done
fi
