/**
 * Query vectors computed once by MiniLM before the timed part of a bench, served by text, so a
 * timed `search()` does no model work.
 */
import type { Config } from '../../core/config.js';
import type { Embedder } from '../../embed/embedder.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { MINILM_FP32_SHA256 } from '../../embed/model-locator.js';
import { MiniLmEmbedder } from '../../embed/minilm.js';
import { sanitizeQuery } from '../../palace/search/query-sanitizer.js';
import { DIM } from './synthetic-drawers.js';

export class PrecomputedEmbedder implements Embedder {
  readonly model = 'all-MiniLM-L6-v2 (precomputed)';
  readonly dimension = DIM;
  readonly identity: ModelIdentity = { name: 'all-MiniLM-L6-v2', dimension: DIM, weightsSha256: MINILM_FP32_SHA256 };
  private constructor(private readonly vectors: Map<string, Float32Array>) {}

  /** Embeds `queries` with MiniLM now, once, as a search that sanitizes its query will ask for them. */
  static async of(config: Config, queries: readonly string[]): Promise<PrecomputedEmbedder> {
    const minilm = new MiniLmEmbedder(config);
    const texts = [...new Set(queries.map((q) => sanitizeQuery(q).query))];
    try {
      return new PrecomputedEmbedder(new Map((await minilm.embed(texts)).map((v, i) => [texts[i]!, v])));
    } finally {
      await minilm.close();
    }
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => {
      const v = this.vectors.get(t);
      if (!v) throw new Error(`no precomputed vector for ${JSON.stringify(t)}`);
      return v;
    });
  }

  async close(): Promise<void> {}
}
