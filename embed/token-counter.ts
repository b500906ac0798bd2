/**
 * Counting tokens as the embedding model sees them (the wake-up budget): the model's own
 * WordPiece tokenizer, without truncation, [CLS] and [SEP] not counted. Loads only
 * tokenizer.json, never the ONNX session.
 */
import fs from 'node:fs/promises';
import type { Config } from '../core/config.js';
import { PalaceError } from '../core/errors.js';
import { MiniLmTokenizer } from './minilm-tokenizer.js';
import { locateMiniLmModel } from './model-locator.js';

export type TokenCounter = (text: string) => number;

export async function loadTokenCounter(config: Pick<Config, 'modelDir'>): Promise<TokenCounter> {
  const files = locateMiniLmModel(config);
  let json: object;
  try {
    json = JSON.parse(await fs.readFile(files.tokenizerPath, 'utf8')) as object;
  } catch (cause) {
    throw new PalaceError('internal', `Could not read the tokenizer at ${files.tokenizerPath}: ${String(cause)}`, { field: 'MEMPALACE_MODEL_DIR',
      rule: 'model_loadable', cause });
  }
  const tokenizer = new MiniLmTokenizer(json, Number.MAX_SAFE_INTEGER);
  return (text) => Math.max(0, tokenizer.encode(text).length - 2);
}
