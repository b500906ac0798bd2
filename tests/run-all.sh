#!/usr/bin/env bash
# The whole test suite: fetch the embedding model, start the real engines the cluster tests need
# (reusing any already healthy), run the vitest projects, and stop the engines this run started.
# Projects run one after another: the fault tests kill and restart shared engines, so nothing else
# may be running against them meanwhile. Arguments, if any, go to a single vitest run instead:
# `bash tests/run-all.sh --project integration` (what `npm run test:integration` does), or one file.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash embed/fetch-model.sh
# The int8 variant (MEMPALACE_EMBED_MODEL=all-MiniLM-L6-v2-q) that the model-record and reembed tests use.
bash embed/fetch-model.sh all-MiniLM-L6-v2-q
# The second encoder of issue 26, both forms (tests/unit/embedder-bge.test.ts).
bash embed/fetch-model.sh bge-small-en-v1.5
bash embed/fetch-model.sh bge-small-en-v1.5-q
# The MCP Inspector CLI the conformance test runs, pinned by its own lockfile (see its package.json).
npm ci --prefix tests/tools/inspector --engine-strict=false --no-audit --no-fund

engines_were_up=0
if bash deploy/local/status.sh >/dev/null 2>&1; then engines_were_up=1; fi
logs=
clean_up() {
  if [[ -n $logs ]]; then rm -rf "$logs"; fi
  if [[ $engines_were_up == 0 ]]; then bash deploy/local/down.sh || true; fi
}
trap clean_up EXIT
if [[ $engines_were_up == 0 ]]; then bash deploy/local/up.sh; fi
# shellcheck source=../deploy/local/env.sh
source deploy/local/env.sh

if [[ $# -gt 0 ]]; then
  npx vitest run "$@"
  exit
fi
# Each project's output is also kept, so the failures of every project are repeated at the end,
# where a CI log's tail shows them (a later project's output would otherwise push them out).
logs=$(mktemp -d)
failed=()
for project in unit contract integration e2e fault; do
  echo "== vitest project: $project"
  npx vitest run --project "$project" 2>&1 | tee "$logs/$project.log" || failed+=("$project")
done
if [[ ${#failed[@]} -gt 0 ]]; then
  for project in "${failed[@]}"; do
    echo "== failures in project $project"
    sed 's/\x1b\[[0-9;]*m//g' "$logs/$project.log" | grep -E '^ *(FAIL|×|✗) ' | head -40 || true
    # Error records the code under test logged (pino levels 50 and 60), cut to their first 2,000 characters.
    grep -E '"level":(50|60)' "$logs/$project.log" | cut -c1-2000 | head -20 || true
    sed 's/\x1b\[[0-9;]*m//g' "$logs/$project.log" | sed -n '/Failed Tests [0-9]/,/Test Files /p' | head -200
  done
  echo "== failed projects: ${failed[*]}"
  exit 1
fi
