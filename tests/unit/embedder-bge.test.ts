/**
 * bge-small-en-v1.5 (the second encoder of issue 26) through the MiniLM embedder machinery, int8
 * and fp32. Needs both models in MEMPALACE_MODEL_DIR (`npm run model:fetch -- bge-small-en-v1.5`
 * and `npm run model:fetch -- bge-small-en-v1.5-q`).
 *
 * CLS pooling is checked against the model's own [CLS] state computed here with onnxruntime
 * directly; the bounds on cosines were set from measured values with a margin (see each test).
 */
import fs from 'node:fs';
import ort from 'onnxruntime-node';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { MINILM_DIMENSION } from '../../embed/minilm-model.js';
import { MiniLmTokenizer } from '../../embed/minilm-tokenizer.js';
import { BGE_FP32_SHA256, BGE_INT8_MODEL_NAME, BGE_INT8_SHA256, BGE_MODEL_NAME, BGE_QUERY_INSTRUCTION, encoderVariant,
  locateMiniLmModel } from '../../embed/model-locator.js';

const config = loadConfig();
const int8 = new MiniLmEmbedder(config, { model: BGE_INT8_MODEL_NAME });
const fp32 = new MiniLmEmbedder(config, { model: BGE_MODEL_NAME });

afterAll(async () => {
  await Promise.all([int8.close(), fp32.close()]);
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);

/** Sentences and drawer-sized pieces of this repository's code and prose. */
const pieces = ['../../README.md', '../../embed/minilm.ts'].flatMap((file) => {
  const text = fs.readFileSync(new URL(file, import.meta.url), 'utf8');
  return Array.from({ length: 4 }, (_, i) => text.slice(i * 900, i * 900 + 900)).filter((piece) => piece.trim().length > 0);
});
const texts = ['A man is eating food.', 'A man is eating a piece of bread.', 'The girl is carrying a baby.',
  `${BGE_QUERY_INSTRUCTION}how are drawer ids made deterministic`, ...pieces];

/** 1 + n single-token words; the tokenizer keeps [CLS] and [SEP] around them. */
const words = (n: number) => Array.from({ length: n }, (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat', 'while', 'rain', 'fell', 'outside'][i % 10]).join(' ');

describe('bge-small-en-v1.5 embedder', () => {
  it('reports each variant’s identity and is not a MEMPALACE_EMBED_MODEL choice', () => {
    expect(fp32.identity).toEqual({ name: BGE_MODEL_NAME, dimension: MINILM_DIMENSION, weightsSha256: BGE_FP32_SHA256 });
    expect(int8.identity).toEqual({ name: BGE_INT8_MODEL_NAME, dimension: MINILM_DIMENSION, weightsSha256: BGE_INT8_SHA256 });
    expect(() => new MiniLmEmbedder({ ...config, embed: { model: BGE_MODEL_NAME, threads: 1 } })).toThrow(/MEMPALACE_EMBED_MODEL/);
  });

  it('pools the [CLS] state: equal to the model’s first token state, normalised', async () => {
    const variant = encoderVariant(BGE_MODEL_NAME);
    const files = locateMiniLmModel(config, variant);
    const tokenizer = new MiniLmTokenizer(JSON.parse(fs.readFileSync(files.tokenizerPath, 'utf8')) as object, variant.maxTokens);
    const session = await ort.InferenceSession.create(files.onnxPath);
    try {
      const text = texts[1]!;
      const ids = tokenizer.encode(text);
      const tensor = (values: number[]) => new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), [1, values.length]);
      const feeds = { input_ids: tensor(ids), attention_mask: tensor(ids.map(() => 1)), token_type_ids: tensor(ids.map(() => 0)) };
      const hidden = (await session.run(feeds)).last_hidden_state!.data as Float32Array;
      const cls = hidden.slice(0, MINILM_DIMENSION);
      const norm = Math.hypot(...cls);
      const [vector] = await fp32.embed([text]);
      expect(vector).toHaveLength(MINILM_DIMENSION);
      expect(dot(vector!, cls.map((v) => v / norm))).toBeGreaterThan(0.9999);
      // The mean of all token states is a different vector: the check above tells the two apart.
      const mean = new Float32Array(MINILM_DIMENSION);
      for (let t = 0; t < ids.length; t += 1) for (let d = 0; d < MINILM_DIMENSION; d += 1) mean[d]! += hidden[t * MINILM_DIMENSION + d]!;
      const meanNorm = Math.hypot(...mean);
      expect(dot(vector!, mean.map((v) => v / meanNorm))).toBeLessThan(0.99);
    } finally {
      await session.release();
    }
  });

  it('gives unit vectors and a sane similarity order on a known sentence pair', async () => {
    const [food, bread, baby] = await fp32.embed(texts.slice(0, 3));
    for (const v of [food!, bread!, baby!]) expect(Math.abs(dot(v, v) - 1)).toBeLessThan(1e-5);
    // Measured: food·bread 0.84, food·baby 0.39 (bge's cosines sit high: unrelated pairs are not near 0).
    expect(dot(food!, bread!)).toBeGreaterThan(0.75);
    expect(dot(food!, bread!) - dot(food!, baby!)).toBeGreaterThan(0.2);
  });

  it('reads up to 512 tokens: a longer text embeds as its first 510 words', async () => {
    const [long, first510, first300] = await fp32.embed([words(700), words(510), words(300)]);
    expect(dot(long!, first510!)).toBeGreaterThan(0.9999);
    expect(dot(long!, first300!)).toBeLessThan(0.9999);
  });

  // Measured on these texts: 0.9955–0.9981; the brief's bound 0.98 leaves room for other texts.
  it('int8 agrees with fp32 on sentences, code and prose (cosine > 0.98)', async () => {
    const [a, b] = await Promise.all([int8.embed(texts), fp32.embed(texts)]);
    const cosines = a.map((v, i) => dot(v, b[i]!));
    expect(Math.min(...cosines)).toBeGreaterThan(0.98);
  });
});
