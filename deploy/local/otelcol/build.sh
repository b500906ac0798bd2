#!/usr/bin/env bash
# Builds the test OpenTelemetry Collector (main.go + go.mod here) into the stack's engines folder and
# prints the binary's path. Cached by a digest of its inputs: a second run with the same sources
# builds nothing. Modules come through GOPROXY from the environment.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

src="$DEPLOY_DIR/otelcol"
dir="$ENGINES_DIR/otelcol"
digest="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)"
binary="$dir/otelcol-$digest"

if [[ ! -x $binary ]]; then
  echo "otelcol: building the collector from its Go modules (first run only)" >&2
  mkdir -p "$dir"
  rm -f "$dir"/otelcol-*
  (cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -o "$binary.partial" .)
  mv "$binary.partial" "$binary"
fi
echo "$binary"
