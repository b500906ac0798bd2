import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import { hashN } from '../../core/text.js';
import { buildHallwaysForWing, deleteHallwayOperation, hallwayLabel, listHallwaysOperation, spellingKey } from '../../palace/graph/hallways.js';
import type { GraphPalace } from './graph-fixtures.js';
import { openGraphPalace } from './graph-fixtures.js';
import { operationCall } from '../helpers/operation-call.js';

const deleteHallway = operationCall(deleteHallwayOperation);
const listHallways = operationCall(listHallwaysOperation);

let palace: GraphPalace;
let clock: Date;

beforeEach(async () => {
  clock = new Date('2032-01-01T00:00:00.000Z');
  palace = await openGraphPalace(() => clock);
  await palace.file([
    { wing: 'alpha', room: 'auth', entities: 'Amy;Bob;src/auth.py' },
    { wing: 'alpha', room: 'ops', entities: 'Bob;Amy' },
    { wing: 'alpha', room: 'auth', entities: 'Auth;Amy' },
    { wing: 'alpha', room: 'auth', entities: ' Amy ; Bob;Amy;;' },
    { wing: 'alpha', room: 'auth', entities: 'Amy;Cat', extra: { is_sentinel: true } },
    { wing: 'alpha', room: 'auth', entities: 'Cat;Amy' },
    { wing: 'alpha', room: 'auth', entities: 'auth.ts;Auth' },
    { wing: 'alpha', room: 'auth' },
    { wing: 'beta', room: 'x', entities: 'Amy;Bob' },
    { wing: 'beta', room: 'y', entities: 'Amy;Bob' },
  ]);
});
afterEach(async () => {
  await palace.cleanup();
});

describe('spelling keys and labels', () => {
  it('keys an entity by its last path segment without a code extension, lowercased', () => {
    const keys = { 'src/Auth.PY': 'auth', 'C:\\x\\Parser.rs': 'parser', 'Node.js': 'node', 'v1.2': 'v1.2', '.env': '.env' };
    for (const [name, key] of Object.entries(keys)) expect(spellingKey(name), name).toBe(key);
  });

  it('labels with up to three rooms, counting the rest, or says there are no room tags', () => {
    expect(hallwayLabel('A', 'B', 4, ['r1', 'r2', 'r3', 'r4', 'r5'])).toBe('A ↔ B (co-occur in 4 drawers across 5 rooms: r1, r2, r3, +2 more)');
    expect(hallwayLabel('A', 'B', 2, ['r1'])).toBe('A ↔ B (co-occur in 2 drawers across 1 room: r1)');
    expect(hallwayLabel('A', 'B', 1, [])).toBe('A ↔ B (co-occur in 1 drawer across no rooms: (no room tags))');
  });
});

describe('buildHallwaysForWing', () => {
  it('counts co-occurring pairs by spelling key, at least twice, skipping sentinels and self-links', async () => {
    const made = await buildHallwaysForWing(palace.ctx, 'alpha');
    // What every record of a first build carries besides its pair.
    const firstBuild = { created_at: '2032-01-01T00:00:00.000000+00:00', created_by: 'auto', strength: 1, stability: 1,
      last_activated: '2032-01-01T00:00:00.000000+00:00', access_count: 0 };
    expect(made).toEqual([
      { id: `hallway_alpha_Amy_Auth_${hashN('alpha::Amy::Auth', 8)}`, wing: 'alpha', entity_a: 'Amy', entity_b: 'Auth', co_occurrence_count: 2, rooms: ['auth'],
        label: 'Amy ↔ Auth (co-occur in 2 drawers across 1 room: auth)', ...firstBuild },
      { id: `hallway_alpha_Amy_Bob_${hashN('alpha::Amy::Bob', 8)}`, wing: 'alpha', entity_a: 'Amy', entity_b: 'Bob', co_occurrence_count: 3,
        rooms: ['auth', 'ops'], label: 'Amy ↔ Bob (co-occur in 3 drawers across 2 rooms: auth, ops)', ...firstBuild },
    ]);
    expect(await listHallways(palace.ctx, { wing: 'alpha' })).toEqual(made);
  });

  it('keeps pairs seen once when min_count is 1 (values below 1 are clamped)', async () => {
    const pairs = async (min: number) =>
      (await buildHallwaysForWing(palace.ctx, 'alpha', min)).map((h) => `${h.entity_a}+${h.entity_b}=${h.co_occurrence_count}`);
    const expected = ['Amy+Auth=2', 'Amy+Bob=3', 'Amy+Cat=1', 'Auth+Bob=1'];
    expect(await pairs(1)).toEqual(expected);
    expect(await pairs(0)).toEqual(expected);
  });

  it('replaces only its own wing and keeps the dynamics of records that survive', async () => {
    await buildHallwaysForWing(palace.ctx, 'beta');
    const [firstBuilt] = await buildHallwaysForWing(palace.ctx, 'alpha');
    const then = firstBuilt!.created_at;
    clock = new Date('2032-02-01T00:00:00.000Z');
    await palace.file([{ wing: 'alpha', room: 'ops', entities: 'Cat;Dan' }, { wing: 'alpha', room: 'ops', entities: 'Dan;Cat' }]);
    const again = await buildHallwaysForWing(palace.ctx, 'alpha');
    const now = again[0]!.created_at;
    expect(now.startsWith('2032-02-01T00:00:00.')).toBe(true);
    expect(again.map((h) => [h.entity_a, h.entity_b, h.created_at, h.last_activated])).toEqual([
      ['Amy', 'Auth', now, then],
      ['Amy', 'Bob', now, then],
      ['Cat', 'Dan', now, now],
    ]);
    expect((await listHallways(palace.ctx)).map((h) => `${h.wing}:${h.entity_a}+${h.entity_b}`)).toEqual(['alpha:Amy+Auth', 'alpha:Amy+Bob', 'alpha:Cat+Dan',
      'beta:Amy+Bob']);
    expect((await listHallways(palace.ctx, { wing: 'beta' }))[0]!.rooms).toEqual(['x', 'y']);
  });

  it('empties a wing whose drawers no longer pair up', async () => {
    await buildHallwaysForWing(palace.ctx, 'beta');
    await palace.ctx.drawers.deleteWhere({ wing: 'beta' });
    expect(await buildHallwaysForWing(palace.ctx, 'beta')).toEqual([]);
    expect(await listHallways(palace.ctx, { wing: 'beta' })).toEqual([]);
  });

  it('validates the wing', async () => {
    expect((await rejectionOf(buildHallwaysForWing(palace.ctx, '../etc'))).field).toBe('wing');
  });
});

describe('list_hallways and delete_hallway', () => {
  it('matches the wing exactly and rejects an invalid one', async () => {
    await buildHallwaysForWing(palace.ctx, 'alpha');
    expect(await listHallways(palace.ctx, { wing: 'Alpha' })).toEqual([]);
    expect((await listHallways(palace.ctx, { wing: ' ' })).length).toBe(2);
    expect((await rejectionOf(listHallways(palace.ctx, { wing: 'a\0' }))).message).toBe('wing contains null bytes');
  });

  it('reports whether a record was removed and requires an id', async () => {
    const [first] = await buildHallwaysForWing(palace.ctx, 'alpha');
    expect(await deleteHallway(palace.ctx, { hallway_id: first!.id })).toEqual({ deleted: true });
    expect(await deleteHallway(palace.ctx, { hallway_id: first!.id })).toEqual({ deleted: false });
    expect((await listHallways(palace.ctx)).length).toBe(1);
    expect((await rejectionOf(deleteHallway(palace.ctx, { hallway_id: '  ' }))).message).toBe('hallway_id is required');
    expect((await rejectionOf(deleteHallway(palace.ctx, { hallway_id: null }))).field).toBe('hallway_id');
  });
});
