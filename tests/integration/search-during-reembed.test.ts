/**
 * A server already open on a palace when another process starts `mempalace reembed` to a model of
 * another vector length: its searches answer with the structured model mismatch (naming the
 * palace's new model and the re-embed's job) instead of the store's raw vector-length error
 * (OpenSearch) or a comparison of vectors of two lengths (SQLite), while the re-embed runs and
 * after it ends. Both profiles; the embedders are deterministic stand-ins, so no model is loaded.
 */
import { createHash, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { openRuntime } from '../../app/runtime.js';
import type { Config } from '../../core/config.js';
import { PalaceError } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import type { ModelIdentity } from '../../embed/model-identity.js';
import { search } from '../../palace/search/search.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';

/** Unit vectors derived from each text's hash: the same text always gives the same vector. */
function standInEmbedder(name: string, dimension: number): Embedder {
  const identity: ModelIdentity = { name, dimension, weightsSha256: createHash('sha256').update(name).digest('hex') };
  return {
    model: name,
    dimension,
    identity,
    close: () => Promise.resolve(),
    embed: (texts) =>
      Promise.resolve(texts.map((t) => {
        const seed = createHash('sha256').update(t).digest();
        const v = Float32Array.from({ length: dimension }, (_, i) => seed[i % seed.length]! - 127.5 + i / dimension);
        const norm = Math.hypot(...v);
        return v.map((x) => x / norm);
      })),
  };
}

const OLD = standInEmbedder('stand-in-384', 384);
const NEW = standInEmbedder('stand-in-768', 768);
const TEXTS = ['the lease on the flat near the harbour', 'the committee plans the spring fair', 'drawer ids are made deterministic from the source'];
const SEARCH = { sanitize: false, defaultMaxDistance: 0 } as const;

async function refusal(p: Promise<unknown>): Promise<PalaceError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(e).toBeInstanceOf(PalaceError);
  return e as PalaceError;
}

/** Fill a palace with OLD, keep a server open on it, re-embed it to NEW from a second runtime, and search from the server throughout. */
async function searchThroughReembed(config: Config): Promise<void> {
  const server = await openRuntime(config, { embedder: OLD });
  try {
    const vectors = await OLD.embed(TEXTS);
    await server.stores.drawers.upsert(TEXTS.map((content, i) => ({
      id: `drawer_reembed_${i}`,
      content,
      embedding: vectors[i]!,
      meta: { wing: 'notes', room: 'general', source_file: `/notes/${i}.md`, chunk_index: 0, added_by: 'test', filed_at: '2026-01-01T00:00:00.000000Z' },
    })));
    const before = await search(server.drawerContext, { query: 'harbour flat', limit: 3 }, SEARCH);
    expect(before.results).toHaveLength(3);

    // Another process starts the re-embed: it takes the record over, drops the old vectors (another length) and writes the first page.
    const reembedder = await openRuntime(config, { embedder: OLD, palaceModel: 'reembed' });
    try {
      const drawers = reembedder.stores.drawers;
      const converting = { model: OLD.identity, reembed: { target: NEW.identity, jobId: 'job-reembed-under-way' } };
      expect(await drawers.writeModel(converting, { model: OLD.identity })).toBe(true);
      await drawers.resetEmbeddings(NEW.dimension);
      const during = await refusal(search(server.drawerContext, { query: 'harbour flat', limit: 3 }, SEARCH));
      expect(during.toJSON()).toMatchObject({ code: 'invalid_argument', field: 'MEMPALACE_EMBED_MODEL', rule: 'matches_palace_model', retryable: false,
        reembed_job_id: 'job-reembed-under-way', fix: 'MEMPALACE_EMBED_MODEL=stand-in-768' });
      expect(during.message).toContain('being re-embedded to stand-in-768');

      const fresh = await NEW.embed(TEXTS);
      await drawers.replaceEmbeddings(new Map(TEXTS.map((_, i) => [`drawer_reembed_${i}`, fresh[i]!])));
      expect((await refusal(search(server.drawerContext, { query: 'harbour flat', limit: 3 }, SEARCH))).rule).toBe('matches_palace_model');

      // The re-embed ends: the palace is NEW's for good, and the old server is told to restart with it.
      expect(await drawers.writeModel({ model: NEW.identity }, converting)).toBe(true);
      const after = await refusal(search(server.drawerContext, { query: 'harbour flat', limit: 3 }, SEARCH));
      expect(after.toJSON()).toMatchObject({ code: 'invalid_argument', rule: 'matches_palace_model', fix: 'MEMPALACE_EMBED_MODEL=stand-in-768' });
      expect(after.toJSON()).not.toHaveProperty('reembed_job_id');
    } finally {
      await reembedder.close();
    }

    const restarted = await openRuntime(config, { embedder: NEW });
    try {
      const served = await search(restarted.drawerContext, { query: 'harbour flat', limit: 3 }, SEARCH);
      expect(served.results).toHaveLength(3);
    } finally {
      await restarted.close();
    }
  } finally {
    await server.close();
  }
}

describe('search while another process re-embeds the palace to another vector length', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-search-reembed-'));
  });
  afterAll(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  it('embedded profile: the server answers with the structured model mismatch', async () => {
    await searchThroughReembed(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(tmp, randomUUID()) }));
  }, 60_000);

  it('cluster profile: the server answers with the structured model mismatch, not OpenSearch’s vector-length error', async () => {
    const config = clusterConfig('t-search-reembed', { MEMPALACE_PALACE: path.join(tmp, randomUUID()) });
    try {
      await searchThroughReembed(config);
    } finally {
      await dropClusterPalace(config);
    }
  }, 120_000);
});
