#!/usr/bin/env bash
# README command 1, after `npm ci`: build, fetch the embedding model, mine this repository into an
# embedded palace under .palace/ (no server needed) and show a few searches.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
npm run --silent build
bash embed/fetch-model.sh
export MEMPALACE_PALACE="${MEMPALACE_PALACE:-$PWD/.palace}"
node dist/cli/main.js init
node dist/cli/main.js mine . --wing mempalace_repo
node dist/cli/main.js status
for q in "how are drawer ids made deterministic" "event_wait timeout" "splitUrlCredential"; do
  echo; echo "\$ mempalace search \"$q\""
  node dist/cli/main.js search "$q" --results 3
done
