/**
 * Finds the all-MiniLM-L6-v2 files under the configured model directory (`Config.modelDir`,
 * from MEMPALACE_MODEL_DIR). Fetching is embed/fetch-model.sh's job; here we only check that the
 * files are there and say how to get them when they are not.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { PalaceError } from '../core/errors.js';

export const MINILM_MODEL_NAME = 'all-MiniLM-L6-v2';
/** File names as packed by the model jar that embed/fetch-model.sh unpacks. */
export const MINILM_ONNX_FILE = 'all-minilm-l6-v2.onnx';
export const MINILM_TOKENIZER_FILE = 'all-minilm-l6-v2-tokenizer.json';
/** SHA-256 of the fp32 weights file; embed/fetch-model.sh verifies the same value. */
export const MINILM_FP32_SHA256 = '759c3cd2b7fe7e93933ad23c4c9181b7396442a2ed746ec7c1d46192c469c46e';

export interface MiniLmModelFiles {
  /** The model's own folder: `<modelDir>/all-MiniLM-L6-v2`. */
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
export function locateMiniLmModel(config: Pick<Config, 'modelDir'>): MiniLmModelFiles {
  const dir = path.join(config.modelDir, MINILM_MODEL_NAME);
  const files: MiniLmModelFiles = {
    dir,
    onnxPath: path.join(dir, MINILM_ONNX_FILE),
    tokenizerPath: path.join(dir, MINILM_TOKENIZER_FILE),
  };
  const missing = [files.onnxPath, files.tokenizerPath].filter((file) => !isNonEmptyFile(file));
  if (missing.length > 0) {
    throw new PalaceError(
      'internal',
      `The ${MINILM_MODEL_NAME} embedding model is missing from ${dir} (missing: ${missing.map((f) => path.basename(f)).join(', ')}). ` +
        'Run `npm run model:fetch` (it honours MEMPALACE_MODEL_DIR), or set MEMPALACE_MODEL_DIR to the folder that holds the fetched model.',
      {
        field: 'MEMPALACE_MODEL_DIR',
        rule: 'model_files_present',
        details: { modelDir: config.modelDir, missing, fix: 'npm run model:fetch' },
      },
    );
  }
  return files;
}
