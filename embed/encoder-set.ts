/**
 * The Embedder of an encoder set (core/encoder-set.ts, issue 26): each text is embedded by every
 * member, each part is a unit vector v_i, and the set's vector is the concatenation of
 * sqrt(w_i)·v_i. Its norm is sqrt(Σ w_i) = 1, and its inner product with a query vector built the
 * same way is Σ w_i·cos_i: the weighted sum of the members' cosines, so both stores rank by the
 * fused score with one vector search and need nothing beyond the longer dimension, and a result's
 * `similarity` stays the cosine of the (set) vectors. bench/README.md "Encoders" has the measurements.
 */
import { createHash } from 'node:crypto';
import type { Config } from '../core/config.js';
import type { EncoderWeight } from '../core/encoder-set.js';
import { encoderSetText, parseEncoderSet } from '../core/encoder-set.js';
import { PalaceError } from '../core/errors.js';
import type { EmbedOptions, Embedder } from './embedder.js';
import type { ModelIdentity } from './model-identity.js';
import { MiniLmEmbedder } from './minilm.js';
import type { MiniLmOptions } from './minilm.js';

export class EncoderSetEmbedder implements Embedder {
  readonly model: string;
  readonly dimension: number;
  readonly identity: ModelIdentity;
  private readonly scales: number[];
  private closed = false;

  /** `members` in the set's order, each with its weight; the set owns (and closes) them. */
  constructor(private readonly members: readonly { embedder: Embedder; weight: number }[]) {
    const set = members.map((m) => ({ name: m.embedder.model, weight: m.weight }));
    const total = set.reduce((s, e) => s + e.weight, 0);
    this.scales = set.map((e) => Math.sqrt(e.weight / total));
    this.model = encoderSetText(set);
    this.dimension = members.reduce((s, m) => s + m.embedder.dimension, 0);
    const encoders = members.map((m) => ({ name: m.embedder.model, dimension: m.embedder.dimension, weight: m.weight,
      weightsSha256: m.embedder.identity.weightsSha256 })
    );
    const checksum = createHash('sha256').update(JSON.stringify(encoders.map((e) => [e.name, e.weight, e.weightsSha256]))).digest('hex');
    this.identity = { name: this.model, dimension: this.dimension, weightsSha256: checksum, encoders };
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.closed) throw new PalaceError('internal', 'embed() called after close()', { rule: 'embedder_open' });
    const out = texts.map(() => new Float32Array(this.dimension));
    let offset = 0;
    // One member after the other: each already uses every thread it is given.
    for (const [i, member] of this.members.entries()) {
      const parts = await member.embedder.embed(texts, options);
      const scale = this.scales[i]!;
      parts.forEach((part, row) => {
        const target = out[row]!;
        for (let d = 0; d < part.length; d += 1) target[offset + d] = part[d]! * scale;
      });
      offset += member.embedder.dimension;
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.members.map((m) => m.embedder.close()));
  }
}

/**
 * The embedder of an encoder set: the one model's own embedder for a set of one, the fused set
 * otherwise. Unknown names and missing model files are refused at once (embed/model-locator.ts).
 */
export function openEncoderSet(config: Pick<Config, 'modelDir'> & Partial<Pick<Config, 'embed'>>, set: readonly EncoderWeight[],
  options: Omit<MiniLmOptions, 'model'> = {}): Embedder {
  if (set.length === 1) return new MiniLmEmbedder(config, { ...options, model: set[0]!.name });
  const members: { embedder: Embedder; weight: number }[] = [];
  try {
    for (const e of set) members.push({ embedder: new MiniLmEmbedder(config, { ...options, model: e.name }), weight: e.weight });
  } catch (e) {
    void Promise.all(members.map((m) => m.embedder.close()));
    throw e;
  }
  return new EncoderSetEmbedder(members);
}

/**
 * The embedder a configuration asks for: MEMPALACE_ENCODERS when set, else MEMPALACE_EMBED_MODEL
 * (or the default all-MiniLM-L6-v2) alone, as before encoder sets existed.
 */
export function configuredEmbedder(config: Pick<Config, 'modelDir'> & Partial<Pick<Config, 'embed'>>): Embedder {
  const set = config.embed?.encoders;
  return set === undefined ? new MiniLmEmbedder(config) : openEncoderSet(config, set);
}

/** The embedder of a model name or an encoder set's text (`mempalace reembed`'s target). */
export function embedderOfSetText(config: Pick<Config, 'modelDir'> & Partial<Pick<Config, 'embed'>>, text: string): Embedder {
  return openEncoderSet(config, parseEncoderSet(text, 'model'));
}
