/**
 * The wake-up context over a real embedded palace: current facts of the entities with the most
 * current facts (an ended fact is left out), the latest diary entries newest first, the map of
 * wings and rooms, always within the token budget as the model's tokenizer counts it, and the
 * same text for the same palace and clock.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { loadTokenCounter } from '../../embed/token-counter.js';
import type { TokenCounter } from '../../embed/token-counter.js';
import { kgAddOperation, kgInvalidateOperation } from '../../palace/kg/kg.js';
import { operationCall } from '../helpers/operation-call.js';
import { wakeUp } from '../../palace/hooks/wake-up.js';
import type { PalaceStores } from '../../stores/ports/palace-stores.js';
import { openStores } from '../../stores/open.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';

const kgAdd = operationCall(kgAddOperation);
const kgInvalidate = operationCall(kgInvalidateOperation);

const dir = makeTempDir('mempalace-wake-up-');
let stores: PalaceStores;
let countTokens: TokenCounter;
const now = () => new Date('2026-06-01T12:00:00Z');

function unit(i: number): Float32Array {
  const v = new Float32Array(384);
  v[i % 384] = 1;
  return v;
}

beforeAll(async () => {
  stores = await openStores(loadConfig({ ...process.env, MEMPALACE_PROFILE: 'embedded', MEMPALACE_PALACE: path.join(dir, 'palace') }));
  countTokens = await loadTokenCounter(loadConfig());
  const kg = { graph: stores.graph, now };
  await kgAdd(kg, { subject: 'Mira', predicate: 'works_on', object: 'ledger', valid_from: '2026-01-05' });
  await kgAdd(kg, { subject: 'Mira', predicate: 'reports_to', object: 'Tomás' });
  await kgAdd(kg, { subject: 'Tomás', predicate: 'leads', object: 'ledger' });
  await kgAdd(kg, { subject: 'Mira', predicate: 'uses', object: 'vim' });
  await kgInvalidate(kg, { subject: 'Mira', predicate: 'uses', object: 'vim', ended: '2026-03-01' });
  const rows = [
    ...Array.from({ length: 7 },
      (_, i) => ({ id: `diary_${i}`, content: `Diary entry number ${i}: reviewed the ledger export and the berth plan.`,
        meta: { wing: 'ledger', room: 'diary', source_file: '', chunk_index: 0, added_by: 'claude', agent: 'claude',
          filed_at: `2026-05-2${i}T10:00:00.000000Z` } })),
    ...Array.from({ length: 3 },
      (_, i) => ({ id: `code_${i}`, content: `Export code chunk ${i}`,
        meta: { wing: 'ledger', room: 'backend', source_file: '/x.ts', chunk_index: 0, added_by: 'mine', filed_at: '2026-05-01T10:00:00.000000Z' } })),
  ];
  await stores.drawers.upsert(rows.map((r, i) => ({ ...r, embedding: unit(i) })));
});

afterAll(async () => {
  await stores?.close();
  removeDir(dir);
});

describe('wake-up', () => {
  const ctx = () => ({ drawers: stores.drawers, graph: stores.graph, countTokens, identity: "I am the ledger team's assistant.", now });

  it('holds identity, protocol, current facts, the latest diary entries and the map', async () => {
    const w = await wakeUp(ctx());
    expect(w.text.startsWith("## Identity\nI am the ledger team's assistant.")).toBe(true);
    expect(w.text).toContain('- Mira → works_on → ledger (since 2026-01-05)');
    expect(w.text).toContain('- Mira → reports_to → Tomás');
    expect(w.text).toContain('- Tomás → leads → ledger');
    expect(w.text).not.toContain('vim');
    const diary = w.text.split('\n').filter((l) => l.includes('Diary entry number'));
    expect(diary.map((l) => /number (\d)/.exec(l)![1])).toEqual(['6', '5', '4', '3', '2']);
    expect(w.text).toContain('- ledger: diary (7), backend (3)');
    expect(w.tokens).toBe(countTokens(w.text));
    expect(w.tokens).toBeLessThanOrEqual(900);
    expect(w.omitted_lines).toBe(0);
  });

  it('is the same text for the same palace and clock', async () => {
    expect((await wakeUp(ctx())).text).toBe((await wakeUp(ctx())).text);
  });

  it('stays within a small budget, keeping the higher sections first', async () => {
    const w = await wakeUp(ctx(), { budget: 120 });
    expect(countTokens(w.text)).toBeLessThanOrEqual(120);
    expect(w.omitted_lines).toBeGreaterThan(0);
    expect(w.text).toContain('## Identity');
    expect(w.sections.map).toBe(0);
  });

  it('--wing narrows the diary and the map', async () => {
    const w = await wakeUp(ctx(), { wing: 'elsewhere' });
    expect(w.text).not.toContain('Diary entry');
    expect(w.text).not.toContain('## Map');
  });
});
