/**
 * Encoder sets (issue 26): the MEMPALACE_ENCODERS syntax, the fused vector (unit norm, inner
 * product = weighted sum of the members' cosines), the set's identity, and the palace's refusal
 * of another set, naming both.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { encoderSetText, parseEncoderSet } from '../../core/encoder-set.js';
import { dot } from '../../core/vector.js';
import type { Embedder } from '../../embed/embedder.js';
import { EncoderSetEmbedder } from '../../embed/encoder-set.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { encodersOf, sameModel } from '../../embed/model-identity.js';
import { checkPalaceModel, modelMismatch } from '../../palace/drawers/palace-model.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { rejectionOf, thrownBy } from '../helpers/errors.js';
import { openInTempDir } from '../helpers/tmp.js';

/** A deterministic fake encoder: a unit vector from the text's character codes, different per name. */
class FakeEncoder implements Embedder {
  readonly identity: ModelIdentity;
  closed = false;
  constructor(readonly model: string, readonly dimension: number) {
    this.identity = { name: model, dimension, weightsSha256: model.padEnd(64, '0').slice(0, 64) };
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const v = new Float32Array(this.dimension);
      for (let i = 0; i < text.length; i += 1) v[(text.charCodeAt(i) * (this.model.length + 3) + i) % this.dimension]! += 1 + (i % 3);
      const norm = Math.sqrt(dot(v, v));
      return v.map((x) => x / norm);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

const refusal = (p: Promise<unknown>) => rejectionOf(p);

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

describe('encoder set syntax', () => {
  it('normalises weights to sum 1 and writes one canonical text', () => {
    expect(parseEncoderSet('a:1, b:3', 'X')).toEqual([{ name: 'a', weight: 0.25 }, { name: 'b', weight: 0.75 }]);
    expect(encoderSetText(parseEncoderSet('a:2,b:2', 'X'))).toBe('a:0.5,b:0.5');
    expect(encoderSetText(parseEncoderSet('all-MiniLM-L6-v2', 'X'))).toBe('all-MiniLM-L6-v2');
    expect(encoderSetText(parseEncoderSet('all-MiniLM-L6-v2:0.3', 'X'))).toBe('all-MiniLM-L6-v2');
    expect(parseEncoderSet('a,b,c', 'X').map((e) => e.weight)).toEqual([0.333333, 0.333333, 0.333333]);
  });

  it.each(['', ',', 'a:0', 'a:-1', 'a:x', 'a,a', 'a b'])('refuses %j, naming the field and the rule', (text) => {
    const e = thrownBy(() => parseEncoderSet(text, 'MEMPALACE_ENCODERS'));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_ENCODERS', rule: 'encoder_set' });
  });

  it('MEMPALACE_ENCODERS configures the set; unset keeps the one model; both set is refused', () => {
    expect(loadConfig({ MEMPALACE_ENCODERS: 'all-MiniLM-L6-v2:1,bge-small-en-v1.5-q:1' }).embed.encoders).toEqual([
      { name: 'all-MiniLM-L6-v2', weight: 0.5 },
      { name: 'bge-small-en-v1.5-q', weight: 0.5 },
    ]);
    const plain = loadConfig({}).embed;
    expect(plain.model).toBe('all-MiniLM-L6-v2');
    expect(plain.encoders).toBeUndefined();
    expect(() => loadConfig({ MEMPALACE_ENCODERS: 'a', MEMPALACE_EMBED_MODEL: 'all-MiniLM-L6-v2-q' })).toThrow(/not both/);
  });
});

describe('the fused embedder', () => {
  const texts = ['how are drawer ids made deterministic', 'sha256 of the wing, room and content', 'a lease with a fencing token'];

  it('gives unit vectors whose inner product is the weighted sum of the members’ cosines', async () => {
    const a = new FakeEncoder('enc-a', 16);
    const b = new FakeEncoder('enc-b', 24);
    const set = new EncoderSetEmbedder([{ embedder: a, weight: 0.3 }, { embedder: b, weight: 0.7 }]);
    expect(set.dimension).toBe(40);
    const fused = await set.embed(texts);
    const [pa, pb] = [await a.embed(texts), await b.embed(texts)];
    for (const v of fused) expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 6);
    for (let i = 0; i < texts.length; i += 1) {
      for (let j = 0; j < texts.length; j += 1) {
        expect(dot(fused[i]!, fused[j]!)).toBeCloseTo(0.3 * dot(pa[i]!, pa[j]!) + 0.7 * dot(pb[i]!, pb[j]!), 6);
      }
    }
    expect(await set.embed([])).toEqual([]);
    await set.close();
    expect(a.closed && b.closed).toBe(true);
  });

  it('has an identity naming its members, distinct from any other set or weighting', () => {
    const identity = (wa: number, wb: number) =>
      new EncoderSetEmbedder([{ embedder: new FakeEncoder('enc-a', 16), weight: wa }, { embedder: new FakeEncoder('enc-b', 24), weight: wb }]).identity;
    const half = identity(0.5, 0.5);
    expect(half).toMatchObject({ name: 'enc-a:0.5,enc-b:0.5', dimension: 40 });
    expect(half.weightsSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(encodersOf(half).map((e) => [e.name, e.dimension, e.weight])).toEqual([['enc-a', 16, 0.5], ['enc-b', 24, 0.5]]);
    expect(sameModel(half, identity(0.5, 0.5))).toBe(true);
    expect(sameModel(half, identity(0.4, 0.6))).toBe(false);
    // A one-model identity (every palace recorded before sets) is the set of that model alone.
    const single = new FakeEncoder('enc-a', 16).identity;
    expect(encodersOf(single)).toEqual([{ name: 'enc-a', dimension: 16, weight: 1, weightsSha256: single.weightsSha256 }]);
    expect(sameModel(single, half)).toBe(false);
  });
});

describe('a palace and its encoder set', () => {
  async function freshIndex() {
    const { store, cleanup } = await openInTempDir('encoder-set-', openSqliteDrawerIndex);
    cleanups.push(cleanup);
    return store;
  }

  const pair = new EncoderSetEmbedder([{ embedder: new FakeEncoder('enc-a', 384), weight: 0.5 }, { embedder: new FakeEncoder('enc-b', 384), weight: 0.5 }]);
  const single = new FakeEncoder('enc-a', 384);

  it('an empty palace records the set and takes its vector length', async () => {
    const index = await freshIndex();
    expect(index.dimension).toBe(384);
    expect(await checkPalaceModel(index, pair)).toEqual({ model: pair.identity });
    expect(index.dimension).toBe(768);
  });

  it('refuses another set, naming both sets, MEMPALACE_ENCODERS and the reembed that converts it', async () => {
    const index = await freshIndex();
    await checkPalaceModel(index, single);
    const e = await refusal(checkPalaceModel(index, pair));
    expect(e.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_ENCODERS', rule: 'matches_palace_model' });
    expect(e.message).toContain('enc-a (384-d');
    expect(e.message).toContain('the encoder set enc-a:0.5,enc-b:0.5 (768-d');
    expect(e.message).toContain('`mempalace reembed --encoders enc-a:0.5,enc-b:0.5`');
    expect(e.details).toMatchObject({ palace_encoders: [{ name: 'enc-a', weight: 1 }], configured_encoders: [{ name: 'enc-a' }, { name: 'enc-b' }] });
    // The other way round: a palace of the pair refuses the one model, and says how to go back.
    const back = modelMismatch(pair.identity, single.identity);
    expect(back.message).toContain('`mempalace reembed --model enc-a`');
    expect(back.message).toContain('MEMPALACE_ENCODERS=enc-a:0.5,enc-b:0.5');
  });
});
