/**
 * The embedding models this build knows (MEMPALACE_EMBED_MODEL) and where their files live under
 * the configured model directory (`Config.modelDir`, from MEMPALACE_MODEL_DIR). Fetching is
 * embed/fetch-model.sh's job; here we only check that the files are there and say how to get
 * them when they are not.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { PalaceError, invalidArgument } from '../core/errors.js';

export const MINILM_MODEL_NAME = 'all-MiniLM-L6-v2';
export const MINILM_INT8_MODEL_NAME = 'all-MiniLM-L6-v2-q';
/** File names as packed by the fp32 model jar that embed/fetch-model.sh unpacks. */
export const MINILM_ONNX_FILE = 'all-minilm-l6-v2.onnx';
export const MINILM_TOKENIZER_FILE = 'all-minilm-l6-v2-tokenizer.json';
/** SHA-256 of the fp32 weights file; embed/fetch-model.sh verifies the same value. */
export const MINILM_FP32_SHA256 = '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e';
/** SHA-256 of the int8 weights file in its jar; embed/fetch-model.sh verifies the same value. */
export const MINILM_INT8_SHA256 = 'afdb6f1a0e45b715d0bb9b11772f032c399babd23bfc31fed1c170afc848bdb1';

/** SHA-256 of bge-small-en-v1.5's fp32 weights file; embed/fetch-model.sh verifies the same value. */
export const BGE_FP32_SHA256 = '828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35';
/** SHA-256 of bge-small-en-v1.5's int8 weights file; embed/fetch-model.sh verifies the same value. */
export const BGE_INT8_SHA256 = '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4';
export const BGE_MODEL_NAME = 'bge-small-en-v1.5';
export const BGE_INT8_MODEL_NAME = 'bge-small-en-v1.5-q';
/** The prefix bge-small-en-v1.5 was trained with on short queries against passages; never on passages. */
export const BGE_QUERY_INSTRUCTION = 'Represent this sentence for searching relevant passages: ';

/**
 * How a text's token states become its vector: `mean` averages them (sentence-transformers'
 * MiniLM), `cls` takes the [CLS] token's state (bge). Either is then L2-normalised.
 */
export type Pooling = 'mean' | 'cls';

/** One known model: its name (also its folder under the model directory), files and checksum. */
export interface MiniLmVariant {
  name: string;
  onnxFile: string;
  tokenizerFile: string;
  weightsSha256: string;
  pooling: Pooling;
  /** The model's max_seq_length, [CLS] and [SEP] included; longer texts are truncated. */
  maxTokens: number;
  /**
   * Texts per ONNX run unless the caller sets one. The int8 export quantizes activations
   * dynamically with one scale per tensor, i.e. per batch: a text embedded next to others came
   * out with cosine 0.984–0.992 to itself embedded alone. One text per run keeps each vector a
   * function of its text only (as fp32's are in any batch), and measured no slower: int8 at
   * batch 1 took 14.0–16.7 s for 256 CoSQA functions, at batch 32 18.9–21.1 s (no padding).
   * fp32 runs 8: on mining chunks with 2 intra-op threads, batches of 4 and 8 were the fastest
   * (17.8–17.9 texts/s), 16 and 32 took 1.2× and 1.3× as long (bench/embed-batch.bench.ts),
   * and a search waits behind at most one such batch of a running mine.
   */
  defaultBatchSize: number;
}

/** Same network, tokenizer and 384-d output; the int8 weights are a quarter of the size. */
export const MINILM_VARIANTS: readonly MiniLmVariant[] = [
  { name: MINILM_MODEL_NAME, onnxFile: MINILM_ONNX_FILE, tokenizerFile: MINILM_TOKENIZER_FILE, weightsSha256: MINILM_FP32_SHA256, pooling: 'mean',
    maxTokens: 256, defaultBatchSize: 8 },
  { name: MINILM_INT8_MODEL_NAME, onnxFile: 'all-minilm-l6-v2-q.onnx', tokenizerFile: 'all-minilm-l6-v2-q-tokenizer.json', weightsSha256: MINILM_INT8_SHA256,
    pooling: 'mean', maxTokens: 256, defaultBatchSize: 1 },
];

/**
 * The second encoder (issue 26): a 12-layer BERT with MiniLM's vocabulary and tokenizer pipeline
 * (its tokenizer.json differs only in its unused truncation/padding block), 384-d output, CLS
 * pooling, up to 512 tokens. Not selectable by MEMPALACE_EMBED_MODEL: a palace takes it only as
 * a member of an encoder set, chosen by name through `encoderVariant`. Batch sizes as MiniLM's,
 * for the same reasons.
 */
export const BGE_VARIANTS: readonly MiniLmVariant[] = [
  { name: BGE_MODEL_NAME, onnxFile: 'bge-small-en-v1.5.onnx', tokenizerFile: 'bge-small-en-v1.5-tokenizer.json', weightsSha256: BGE_FP32_SHA256, pooling: 'cls',
    maxTokens: 512, defaultBatchSize: 8 },
  { name: BGE_INT8_MODEL_NAME, onnxFile: 'bge-small-en-v1.5-q.onnx', tokenizerFile: 'bge-small-en-v1.5-q-tokenizer.json', weightsSha256: BGE_INT8_SHA256,
    pooling: 'cls', maxTokens: 512, defaultBatchSize: 1 },
];

/** Any encoder this build can run, by name, or an `invalid_argument` listing them. */
export function encoderVariant(name: string): MiniLmVariant {
  const known = [...MINILM_VARIANTS, ...BGE_VARIANTS];
  const variant = known.find((v) => v.name === name);
  if (variant === undefined) throw invalidArgument('model', 'known_model', `the encoder must be one of ${known.map((v) => v.name).join(', ')}, got '${name}'`);
  return variant;
}

/** The variant named by MEMPALACE_EMBED_MODEL, or an `invalid_argument` naming the variable. */
export function miniLmVariant(name: string): MiniLmVariant {
  const variant = MINILM_VARIANTS.find((v) => v.name === name);
  if (variant === undefined) {
    throw invalidArgument('MEMPALACE_EMBED_MODEL', 'known_model', `MEMPALACE_EMBED_MODEL must be one of ${
      MINILM_VARIANTS.map((v) => v.name).join(', ')
    }, got '${name}'`);
  }
  return variant;
}

export interface MiniLmModelFiles {
  /** The model's own folder: `<modelDir>/<model name>`. */
  dir: string;
  onnxPath: string;
  tokenizerPath: string;
}

function isNonEmptyFile(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() && stat.size > 0;
  } catch {
    return false;
  }
}

/**
 * Resolves the model files or throws a PalaceError (code `internal`, field `MEMPALACE_MODEL_DIR`,
 * rule `model_files_present`) that lists the missing files and the command that fetches them.
 */
export function locateMiniLmModel(config: Pick<Config, 'modelDir'>, variant: MiniLmVariant = MINILM_VARIANTS[0]!): MiniLmModelFiles {
  const dir = path.join(config.modelDir, variant.name);
  const files: MiniLmModelFiles = {
    dir,
    onnxPath: path.join(dir, variant.onnxFile),
    tokenizerPath: path.join(dir, variant.tokenizerFile),
  };
  const missing = [files.onnxPath, files.tokenizerPath].filter((file) => !isNonEmptyFile(file));
  if (missing.length > 0) {
    const fix = variant.name === MINILM_MODEL_NAME ? 'npm run model:fetch' : `npm run model:fetch -- ${variant.name}`;
    throw new PalaceError(
      'internal',
      `The ${variant.name} embedding model is missing from ${dir} (missing: ${missing.map((f) => path.basename(f)).join(', ')}). ` +
        `Run \`${fix}\` (it honours MEMPALACE_MODEL_DIR), or set MEMPALACE_MODEL_DIR to the folder that holds the fetched model.`,
      {
        field: 'MEMPALACE_MODEL_DIR',
        rule: 'model_files_present',
        details: { modelDir: config.modelDir, missing, fix },
      },
    );
  }
  return files;
}
