/**
 * The int8 all-MiniLM-L6-v2 (MEMPALACE_EMBED_MODEL=all-MiniLM-L6-v2-q) against the fp32 model on
 * the same texts. Needs both models in MEMPALACE_MODEL_DIR (`npm run model:fetch` and
 * `npm run model:fetch -- all-MiniLM-L6-v2-q`).
 *
 * The bound: on 773 CoSQA texts (queries and Python functions, int8 at batch 32) the cosine to the
 * fp32 ones was at least 0.984 (1st percentile 0.988, median 0.993); 0.97 leaves a margin below
 * that minimum for other texts.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { PalaceError } from '../../core/errors.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { MINILM_DIMENSION } from '../../embed/minilm-model.js';
import { MINILM_FP32_SHA256, MINILM_INT8_SHA256 } from '../../embed/model-locator.js';

const COSINE_TO_FP32_MIN = 0.97;

const reference = JSON.parse(fs.readFileSync(new URL('../fixtures/minilm-reference.json', import.meta.url), 'utf8')) as { sentences: { text: string }[] };
/** Code and prose of this repository, cut into drawer-sized pieces, besides the reference sentences. */
const pieces = ['../../README.md', '../../embed/minilm.ts', '../../embed/cpu-budget.ts'].flatMap((file) => {
  const text = fs.readFileSync(new URL(file, import.meta.url), 'utf8');
  return Array.from({ length: 12 }, (_, i) => text.slice(i * 700, i * 700 + 700)).filter((piece) => piece.trim().length > 0);
});
const texts = [...reference.sentences.map((s) => s.text), ...pieces];

const config = loadConfig({ ...process.env, MEMPALACE_EMBED_MODEL: 'all-MiniLM-L6-v2-q' });
const int8 = new MiniLmEmbedder(config);
const fp32 = new MiniLmEmbedder(config, { model: 'all-MiniLM-L6-v2' });

afterAll(async () => {
  await Promise.all([int8.close(), fp32.close()]);
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

describe('int8 MiniLM embedder', () => {
  it('reports its own identity, distinct from the fp32 model', () => {
    expect(int8.identity).toEqual({ name: 'all-MiniLM-L6-v2-q', dimension: MINILM_DIMENSION, weightsSha256: MINILM_INT8_SHA256 });
    expect(int8.model).toBe('all-MiniLM-L6-v2-q');
    expect(fp32.identity).toEqual({ name: 'all-MiniLM-L6-v2', dimension: MINILM_DIMENSION, weightsSha256: MINILM_FP32_SHA256 });
  });

  it('gives unit vectors close to the fp32 ones', async () => {
    const [a, b] = await Promise.all([int8.embed(texts), fp32.embed(texts)]);
    expect(a).toHaveLength(texts.length);
    for (let i = 0; i < texts.length; i += 1) {
      expect(a[i]!.length).toBe(MINILM_DIMENSION);
      expect(Math.abs(Math.sqrt(dot(a[i]!, a[i]!)) - 1)).toBeLessThan(1e-5);
      expect(dot(a[i]!, b[i]!), texts[i]!.slice(0, 40)).toBeGreaterThan(COSINE_TO_FP32_MIN);
    }
    // Not the fp32 model under another name: the quantized weights do move the vectors.
    expect(Math.min(...a.map((v, i) => dot(v, b[i]!)))).toBeLessThan(0.9999);
  });

  it('gives each text the same vector alone as among other texts', async () => {
    const batch = await int8.embed(texts);
    for (const i of [0, 7, texts.length - 1]) {
      const [alone] = await int8.embed([texts[i]!]);
      expect(Array.from(alone!)).toEqual(Array.from(batch[i]!));
    }
  });

  it('refuses an unknown model name, naming MEMPALACE_EMBED_MODEL', () => {
    let failure: unknown;
    try {
      new MiniLmEmbedder({ ...config, embed: { model: 'all-MiniLM-L12-v2', threads: 1 } });
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(PalaceError);
    expect((failure as PalaceError).toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'known_model' });
  });
});
