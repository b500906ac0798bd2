/**
 * The MiniLM embedder against reference vectors from sentence-transformers
 * (tests/fixtures/minilm-reference.json, made by embed/reference/make_reference.py). Needs the model
 * fetched by `npm run model:fetch` into MEMPALACE_MODEL_DIR.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { PalaceError } from '../../core/errors.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { MINILM_DIMENSION } from '../../embed/minilm-model.js';
import { MiniLmTokenizer } from '../../embed/minilm-tokenizer.js';
import { locateMiniLmModel, MINILM_MODEL_NAME, MINILM_ONNX_FILE, MINILM_TOKENIZER_FILE, miniLmVariant } from '../../embed/model-locator.js';

interface ReferenceSentence {
  text: string;
  token_ids: number[];
  embedding: number[];
}
interface ReferenceFile {
  max_seq_length: number;
  sentences: ReferenceSentence[];
}

const reference = JSON.parse(
  fs.readFileSync(new URL('../fixtures/minilm-reference.json', import.meta.url), 'utf8'),
) as ReferenceFile;
const texts = reference.sentences.map((s) => s.text);
const config = loadConfig();
const embedder = new MiniLmEmbedder(config, { batchSize: 4 });

afterAll(async () => {
  await embedder.close();
});

function norm(vector: Float32Array): number {
  return Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
}

function maxAbsDifference(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i += 1) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

describe('MiniLM tokenizer', () => {
  it('reproduces the sentence-transformers token ids, truncation included', () => {
    const files = locateMiniLmModel(config);
    // The variant's bound is `max_seq_length` of the sentence-transformers config, [CLS] and [SEP] included.
    const MINILM_MAX_TOKENS = miniLmVariant(MINILM_MODEL_NAME).maxTokens;
    const tokenizer = new MiniLmTokenizer(JSON.parse(fs.readFileSync(files.tokenizerPath, 'utf8')) as object, MINILM_MAX_TOKENS);
    expect(MINILM_MAX_TOKENS).toBe(reference.max_seq_length);
    for (const sentence of reference.sentences) {
      expect(tokenizer.encode(sentence.text), sentence.text.slice(0, 40)).toEqual(sentence.token_ids);
    }
    expect(reference.sentences.some((s) => s.token_ids.length === MINILM_MAX_TOKENS)).toBe(true);
  });
});

describe('MiniLmEmbedder', () => {
  it('matches the sentence-transformers vectors to 1e-4 in every component', async () => {
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    reference.sentences.forEach((sentence, i) => {
      expect(maxAbsDifference(vectors[i]!, sentence.embedding), sentence.text.slice(0, 40)).toBeLessThan(1e-4);
    });
  });

  it('returns 384-dimensional vectors of unit norm', async () => {
    expect(embedder.dimension).toBe(MINILM_DIMENSION);
    expect(embedder.model).toBe('all-MiniLM-L6-v2');
    for (const vector of await embedder.embed(texts)) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(384);
      expect(Math.abs(norm(vector) - 1)).toBeLessThan(1e-5);
    }
  });

  it('gives the same vectors in a padded, sorted batch as one text at a time, in input order', async () => {
    const batched = await embedder.embed(texts);
    for (const [i, text] of texts.entries()) {
      const [single] = await embedder.embed([text]);
      expect(maxAbsDifference(batched[i]!, single!), text.slice(0, 40)).toBeLessThan(1e-5);
    }
  });

  it('ranks a paraphrase above an unrelated sentence', async () => {
    const [query, paraphrase, unrelated] = await embedder.embed([
      'How do I reset my password?',
      'Steps to change a forgotten login password',
      'The recipe needs two cups of flour.',
    ]);
    const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
    expect(dot(query!, paraphrase!)).toBeGreaterThan(dot(query!, unrelated!) + 0.3);
  });

  it('returns nothing for no texts and rejects a non-string', async () => {
    expect(await embedder.embed([])).toEqual([]);
    await expect(embedder.embed(['ok', 42 as unknown as string])).rejects.toMatchObject({ code: 'invalid_argument', field: 'texts[1]' });
  });

  it('keeps the shared model for other embedders when one closes, and refuses use after close', async () => {
    const other = new MiniLmEmbedder(config, { batchSize: 4 });
    const [before] = await other.embed([texts[0]!]);
    await other.close();
    await other.close();
    await expect(other.embed(['x'])).rejects.toBeInstanceOf(PalaceError);
    const [after] = await embedder.embed([texts[0]!]);
    expect(maxAbsDifference(before!, after!)).toBe(0);
  });
});

/** `count` chunk-sized texts (150–200 words) from a fixed seed. */
function chunkTexts(count: number): string[] {
  const words = 'memory palace drawer wing room tunnel hallway agent search vector mined repository diary graph'.split(' ');
  let state = 17;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  return Array.from({ length: count }, () => Array.from({ length: 150 + Math.floor(next() * 51) }, () => words[Math.floor(next() * words.length)]!).join(' '));
}

describe('MiniLmEmbedder off the main thread', () => {
  it('keeps the event loop ticking while a large embed runs', async () => {
    // Each batch of 32 full-length chunks takes at least this long, so a stall would be visible.
    const minBatchMs = 250;
    const batchSize = 32;
    const large = new MiniLmEmbedder(config, { batchSize });
    try {
      await large.embed(['warm up']);
      const chunks = chunkTexts(2 * batchSize);
      let longestGap = 0;
      let ticks = 0;
      let last = performance.now();
      const timer = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
        ticks += 1;
      }, 10);
      const start = performance.now();
      const vectors = await large.embed(chunks);
      const elapsed = performance.now() - start;
      clearInterval(timer);
      longestGap = Math.max(longestGap, performance.now() - last);
      expect(vectors).toHaveLength(chunks.length);
      // Running a batch on this thread would stall the timer for the whole batch. The bound is a
      // quarter of one batch's time, not a fixed number of ms, so a loaded machine (which slows
      // the batches and the timer alike) cannot fail it while an on-thread embed always would.
      const batchMs = elapsed / 2;
      expect(batchMs).toBeGreaterThan(minBatchMs);
      expect(longestGap).toBeLessThan(batchMs / 4);
      expect(ticks).toBeGreaterThan(elapsed / (10 + batchMs / 4));
    } finally {
      await large.close();
    }
  });

  it('answers concurrent calls of several embedders each in its own input order', async () => {
    const other = new MiniLmEmbedder(config, { batchSize: 3 });
    try {
      const reversed = [...texts].reverse();
      const [forward, backward, alone] = await Promise.all([embedder.embed(texts), other.embed(reversed), other.embed([texts[2]!])]);
      const sequential = await embedder.embed(texts);
      texts.forEach((text, i) => {
        expect(maxAbsDifference(forward[i]!, sequential[i]!), text.slice(0, 40)).toBeLessThan(1e-5);
        expect(maxAbsDifference(backward[texts.length - 1 - i]!, sequential[i]!), text.slice(0, 40)).toBeLessThan(1e-5);
      });
      expect(maxAbsDifference(alone[0]!, sequential[2]!)).toBeLessThan(1e-5);
    } finally {
      await other.close();
    }
  });

  it('finishes the oldest of several long calls first, and answers a one-text call before both', async () => {
    const order: string[] = [];
    const chunks = Array.from({ length: 12 }, (_, i) => `${texts[i % texts.length]!} (chunk ${i})`);
    const first = embedder.embed(chunks).then(() => order.push('first'));
    // Shorter than the first: run by run in turn, it would end first.
    const second = embedder.embed(chunks.slice(0, 8).reverse()).then(() => order.push('second'));
    // Posted after both: it waits for at most the run in progress, not for either call's end.
    const query = embedder.embed([texts[0]!]).then(() => order.push('query'));
    await Promise.all([first, second, query]);
    expect(order).toEqual(['query', 'first', 'second']);
  });

  it('stops a call whose signal aborts: it rejects as cancelled and its remaining runs are dropped', async () => {
    const chunks = chunkTexts(48);
    const started = performance.now();
    await embedder.embed(chunks);
    const wholeMs = performance.now() - started;

    await expect(embedder.embed(['never run'], { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'cancelled' });
    const controller = new AbortController();
    const aborted = embedder.embed(chunks, { signal: controller.signal }).then(() => undefined, (e: unknown) => e);
    await new Promise((r) => setTimeout(r, 0));
    controller.abort();
    expect(await aborted).toMatchObject({ code: 'cancelled' });
    // Oldest first: had the aborted call's other 11 runs stayed queued, this one would wait for them.
    const after = performance.now();
    const vectors = await embedder.embed(chunks.slice(0, 8));
    expect(vectors).toHaveLength(8);
    expect(performance.now() - after).toBeLessThan(wholeMs / 2);
  });

  it('reports a model that fails to load as the structured error, and loads it once it is fixed', async () => {
    const modelDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-bad-model-'));
    const real = locateMiniLmModel(config);
    const dir = path.join(modelDir, MINILM_MODEL_NAME);
    try {
      fs.mkdirSync(dir);
      fs.writeFileSync(path.join(dir, MINILM_ONNX_FILE), 'not an onnx model');
      fs.copyFileSync(real.tokenizerPath, path.join(dir, MINILM_TOKENIZER_FILE));
      const broken = new MiniLmEmbedder({ modelDir });
      const failure = await broken.embed(['x']).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(PalaceError);
      expect((failure as PalaceError).toJSON()).toMatchObject({ code: 'internal', field: 'MEMPALACE_MODEL_DIR', rule: 'model_loadable',
        fix: 'npm run model:fetch', modelDir: dir });

      fs.rmSync(path.join(dir, MINILM_ONNX_FILE));
      fs.symlinkSync(real.onnxPath, path.join(dir, MINILM_ONNX_FILE));
      const [fixed] = await broken.embed([texts[0]!]);
      const [expected] = await embedder.embed([texts[0]!]);
      expect(maxAbsDifference(fixed!, expected!)).toBe(0);
      await broken.close();
    } finally {
      fs.rmSync(modelDir, { recursive: true, force: true });
    }
  });
});

describe('model locator', () => {
  it('names MEMPALACE_MODEL_DIR and the fetch command when the model files are missing', () => {
    const emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-no-model-'));
    try {
      let thrown: unknown;
      try {
        new MiniLmEmbedder({ modelDir: emptyDir });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(PalaceError);
      const error = thrown as PalaceError;
      expect(error.code).toBe('internal');
      expect(error.field).toBe('MEMPALACE_MODEL_DIR');
      expect(error.rule).toBe('model_files_present');
      expect(error.message).toContain('npm run model:fetch');
      expect(error.message).toContain(path.join(emptyDir, 'all-MiniLM-L6-v2'));
      expect(error.toJSON()).toMatchObject({ code: 'internal', field: 'MEMPALACE_MODEL_DIR', fix: 'npm run model:fetch' });
    } finally {
      fs.rmSync(emptyDir, { recursive: true, force: true });
    }
  });

  it('resolves both files when the model is present', () => {
    const files = locateMiniLmModel(config);
    expect(path.basename(files.onnxPath)).toBe('all-minilm-l6-v2.onnx');
    expect(fs.statSync(files.tokenizerPath).size).toBeGreaterThan(0);
  });
});
