/**
 * palace/search on the embedded profile with the real embedder: filters, max_distance, the union
 * strategy's lexical candidates, copy folding, the date window and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import type { PalaceError } from '../../core/errors.js';
import { addDrawer } from '../../palace/drawers/drawers.js';
import { search } from '../../palace/search/search.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-search-');
let rt: Runtime;
const tool = { sanitize: true, defaultMaxDistance: 1.5 };

beforeAll(async () => {
  let clock = Date.parse('2026-03-01T10:00:00Z');
  rt = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: fx.tmp }), { embedder: fx.embedder });
  rt.drawerContext.now = () => new Date(clock += 86_400_000);
  const file = (wing: string, room: string, content: string, source = '') => addDrawer(rt.drawerContext, { wing, room, content, source_file: source });
  await file('proj', 'backend', 'The API gateway validates bearer tokens before routing each request to a service.', '/src/gateway.ts');
  await file('proj', 'backend', 'function reconcileLedgerEntries(ledger) { return ledger.filter(isBalanced); }', '/src/ledger.ts');
  await file('proj', 'frontend', 'The login page shows an error banner when the password is wrong.', '/web/login.tsx');
  await file('notes', 'general', 'Grandma bakes apple pie every Sunday afternoon.', '/notes/family.md');
  await file('proj', 'docs', 'Deploys run every Tuesday after the integration suite passes.', '/docs/a.md');
  // The same text in another room is another drawer (add_drawer ids are per wing/room/content).
  await file('proj', 'ops', 'Deploys run every Tuesday after the integration suite passes.', '/docs/b.md');
});

afterAll(async () => {
  await rt?.close();
});

describe('search', () => {
  it('ranks the semantically closest drawer first and reports exact fields', async () => {
    const r = await search(rt.drawerContext, { query: 'how are access tokens checked' }, tool);
    const top = r.results[0]!;
    expect(top.source_file).toBe('gateway.ts');
    expect(top.source_path).toBe('/src/gateway.ts');
    expect(top.similarity).toBeCloseTo(1 - top.distance!, 2);
    expect(r.candidate_strategy).toBe('union');
    expect(r.available_in_scope).toBe(6);
  });

  it('never shows a credential written into the source URL of a drawer mined before credentials were split off', async () => {
    await addDrawer(rt.drawerContext, { wing: 'legacy', room: 'code', content: 'The harbour tide table parser reads the port authority feed every hour.',
      source_file: 'https://oauth2:glpat-s3cr3t@git.example.com/ops/tides.git:src/tides.ts' });
    const r = await search(rt.drawerContext, { query: 'tide table parser', wing: 'legacy' }, tool);
    expect(r.results[0]!.source_path).toBe('https://***@git.example.com/ops/tides.git:src/tides.ts');
    expect(JSON.stringify(r)).not.toContain('s3cr3t');
  });

  it('applies wing and room filters inside the query', async () => {
    const r = await search(rt.drawerContext, { query: 'error banner', wing: 'proj', room: 'backend' }, tool);
    expect(r.results.length).toBeGreaterThan(0);
    expect(r.results.every((h) => h.wing === 'proj' && h.room === 'backend')).toBe(true);
  });

  it('the union strategy brings exact identifiers that the vector pool would miss', async () => {
    const vector = await search(rt.drawerContext, { query: 'reconcileLedgerEntries', limit: 1, candidate_strategy: 'vector', max_distance: 0.6 }, tool);
    const union = await search(rt.drawerContext, { query: 'reconcileLedgerEntries', limit: 1, candidate_strategy: 'union' }, tool);
    expect(union.results[0]?.source_file).toBe('ledger.ts');
    expect(union.results[0]!.bm25_score).toBeGreaterThan(0);
    expect(vector.results.every((h) => h.distance! <= 0.6)).toBe(true);
  });

  it('drops hits beyond max_distance, lexical ones included', async () => {
    const r = await search(rt.drawerContext, { query: 'apple pie recipe', max_distance: 0.5 }, tool);
    expect(r.results.length).toBeGreaterThan(0);
    expect(r.results.every((h) => h.distance! <= 0.5)).toBe(true);
  });

  it('folds identical passages from different files into one hit with also_in', async () => {
    const r = await search(rt.drawerContext, { query: 'when do deploys run' }, tool);
    const deploy = r.results.filter((h) => h.text.startsWith('Deploys run'));
    expect(deploy).toHaveLength(1);
    expect(deploy[0]!.also_in).toHaveLength(1);
    expect([deploy[0]!.source_path, deploy[0]!.also_in![0]!.source_path].sort()).toEqual(['/docs/a.md', '/docs/b.md']);
  });

  it('filters by the filing date window', async () => {
    const all = await search(rt.drawerContext, { query: 'anything at all', limit: 10 }, tool);
    const dates = all.results.map((h) => h.filed_at).sort();
    const cut = dates[3]!;
    const r = await search(rt.drawerContext, { query: 'anything at all', limit: 10, since: cut.slice(0, 10) }, tool);
    expect(r.results.length).toBeGreaterThan(0);
    expect(r.results.every((h) => h.filed_at >= cut.slice(0, 10))).toBe(true);
    expect(r.results.length).toBeLessThan(all.results.length);
  });

  it('rejects bad input with the field named', async () => {
    const fail = async (input: Record<string, unknown>) =>
      search(rt.drawerContext, { query: 'x', ...input }, tool).then(() => undefined, (e: unknown) => e as PalaceError);
    expect((await fail({ query: '   ' }))?.field).toBe('query');
    expect((await fail({ wing: '../etc' }))?.field).toBe('wing');
    expect((await fail({ since: '2026-02-30' }))?.field).toBe('since');
    expect((await fail({ since: '2026-03-05', before: '2026-03-01' }))?.message).toContain('must be earlier than');
    expect((await fail({ candidate_strategy: 'magic' }))?.message).toContain('candidate_strategy');
    expect((await fail({ max_distance: -1 }))?.field).toBe('max_distance');
    const clamped = await search(rt.drawerContext, { query: 'tokens', limit: 1e9 }, tool);
    expect(clamped.results.length).toBeLessThanOrEqual(100);
  });
});
