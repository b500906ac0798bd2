#!/usr/bin/env bash
# The whole test suite: fetch the embedding model, start the real engines the cluster tests need
# (reusing any already healthy), run every vitest project, and stop the engines this run started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash embed/fetch-model.sh

engines_were_up=0
if bash deploy/local/status.sh >/dev/null 2>&1; then engines_were_up=1; fi
stop_engines() {
  if [[ $engines_were_up == 0 ]]; then bash deploy/local/down.sh || true; fi
}
trap stop_engines EXIT
bash deploy/local/up.sh
# shellcheck source=../deploy/local/env.sh
source deploy/local/env.sh

npx vitest run "$@"
