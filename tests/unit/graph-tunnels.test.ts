import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import { hashN } from '../../core/text.js';
import { buildEntityTunnels, buildTopicTunnels, createTunnelOperation, deleteTunnelOperation, followTunnelsOperation,
  listTunnelsOperation } from '../../palace/graph/tunnels.js';
import type { GraphPalace } from './graph-fixtures.js';
import { openGraphPalace } from './graph-fixtures.js';
import { operationCall } from '../helpers/operation-call.js';
import { newTunnel } from '../helpers/tunnels.js';

const createTunnel = operationCall(createTunnelOperation);
const deleteTunnel = operationCall(deleteTunnelOperation);
const followTunnels = operationCall(followTunnelsOperation);
const listTunnels = operationCall(listTunnelsOperation);

let palace: GraphPalace;
let clock: Date;
const long = `${'😀'.repeat(10)}${'x'.repeat(400)}`;

beforeEach(async () => {
  clock = new Date('2031-05-01T10:00:00.000Z');
  palace = await openGraphPalace(() => clock);
  await palace.file([
    { wing: 'alpha', room: 'auth' },
    { id: 'drawer_target', wing: 'beta', room: 'billing', content: long },
    { wing: 'My Wing', room: 'notes' },
    { id: 'drawer_logical_chunk_000000', wing: 'beta', room: 'billing', content: 'first half, ', extra: { parent_drawer_id: 'drawer_logical' } },
    { id: 'drawer_logical_chunk_000001', wing: 'beta', room: 'billing', content: 'second half', extra: { parent_drawer_id: 'drawer_logical', chunk_index: 1 } },
  ]);
});
afterEach(async () => {
  await palace.cleanup();
});

const base = { source_wing: 'alpha', source_room: 'auth', target_wing: 'beta', target_room: 'billing' };

describe('create_tunnel', () => {
  it('stores an explicit tunnel with a symmetric id and default dynamics', async () => {
    const t = await createTunnel(palace.ctx, { ...base, label: 'login pays' });
    // Outside a face (no call actor) who made it is unknown: no created_by.
    expect(t).toEqual(
      newTunnel({ id: hashN('alpha/auth↔beta/billing', 16), source: { wing: 'alpha', room: 'auth' }, target: { wing: 'beta', room: 'billing' },
        label: 'login pays', kind: 'explicit' }, '2031-05-01T10:00:00.000000+00:00'),
    );
  });

  it('treats B→A as the same tunnel: relabels, keeps created_at and dynamics, sets updated_at', async () => {
    const first = await createTunnel(palace.ctx, { ...base, label: 'one' });
    clock = new Date('2031-06-01T00:00:00.000Z');
    const again = await createTunnel(palace.ctx, { source_wing: 'beta', source_room: 'billing', target_wing: 'alpha', target_room: 'auth', label: 'two',
      source_drawer_id: 'drawer_target' });
    expect(again).toEqual({
      ...first,
      source: { wing: 'beta', room: 'billing', drawer_id: 'drawer_target' },
      target: { wing: 'alpha', room: 'auth' },
      label: 'two',
      updated_at: '2031-06-01T00:00:00.000000+00:00',
    });
    expect(await listTunnels(palace.ctx)).toEqual([again]);
  });

  it("records the call's actor as who created a tunnel and who last changed it; a change outside a face names no changer", async () => {
    const made = await createTunnel({ ...palace.ctx, actor: 'alice' }, { ...base, label: 'one' });
    expect(made).toMatchObject({ created_by: 'alice' });
    expect(made).not.toHaveProperty('updated_by');
    // Later than every clock before: the timestamps' microseconds only increase within a process.
    clock = new Date('2031-07-01T00:00:00.000Z');
    const changed = await createTunnel({ ...palace.ctx, actor: 'bob' }, { ...base, label: 'two' });
    expect(changed).toEqual({ ...made, label: 'two', updated_at: '2031-07-01T00:00:00.000000+00:00', updated_by: 'bob' });
    const unknown = await createTunnel(palace.ctx, { ...base, label: 'three' });
    expect(unknown).toMatchObject({ created_by: 'alice', label: 'three' });
    expect(unknown).not.toHaveProperty('updated_by');
  });

  it('refuses an endpoint room without drawers and writes nothing', async () => {
    const src = await rejectionOf(createTunnel(palace.ctx, { ...base, source_room: 'nope' }));
    expect([src.message, src.field]).toEqual(["Source room 'nope' does not exist in wing 'alpha'", 'source_room']);
    const dst = await rejectionOf(createTunnel(palace.ctx, { ...base, target_wing: 'alpha' }));
    expect(dst.message).toBe("Target room 'billing' does not exist in wing 'alpha'");
    expect(await listTunnels(palace.ctx)).toEqual([]);
  });

  it.each([
    [{ source_wing: '' }, 'source_wing', 'source_wing must be a non-empty string'],
    [{ source_room: '../x' }, 'source_room', 'source_room contains invalid path characters'],
    [{ target_wing: 'w'.repeat(129) }, 'target_wing', 'target_wing exceeds maximum length of 128 characters'],
    [{ target_room: 'a\0b' }, 'target_room', 'target_room contains null bytes'],
    [{ label: 'bad\0label' }, 'label', 'label contains null bytes'],
    [{ label: 'l'.repeat(1001) }, 'label', 'label exceeds maximum length of 1000 characters'],
    [{ label: 7 }, 'label', 'label must be a non-empty string'],
    [{ source_drawer_id: 'd'.repeat(513) }, 'source_drawer_id', 'source_drawer_id exceeds maximum length of 512 characters'],
  ])('rejects %j naming %s and writes nothing', async (override, field, message) => {
    const e = await rejectionOf(createTunnel(palace.ctx, { ...base, ...override }));
    expect([e.code, e.field, e.message]).toEqual(['invalid_argument', field, message]);
    expect(await listTunnels(palace.ctx)).toEqual([]);
  });
});

describe('list_tunnels and delete_tunnel', () => {
  it('filters by wing on either end, comparing slugs, in creation order', async () => {
    const a = await createTunnel(palace.ctx, base);
    const b = await createTunnel(palace.ctx, { source_wing: 'My Wing', source_room: 'notes', target_wing: 'alpha', target_room: 'auth' });
    expect((await listTunnels(palace.ctx)).map((t) => t.id)).toEqual([a.id, b.id]);
    expect((await listTunnels(palace.ctx, { wing: 'my-wing' })).map((t) => t.id)).toEqual([b.id]);
    expect((await listTunnels(palace.ctx, { wing: 'ALPHA' })).map((t) => t.id)).toEqual([a.id, b.id]);
    expect((await listTunnels(palace.ctx, { wing: '' })).length).toBe(2);
    expect((await rejectionOf(listTunnels(palace.ctx, { wing: '-x' }))).field).toBe('wing');
  });

  it('deletes idempotently and requires an id', async () => {
    const t = await createTunnel(palace.ctx, base);
    expect(await deleteTunnel(palace.ctx, { tunnel_id: t.id })).toEqual({ deleted: t.id });
    expect(await deleteTunnel(palace.ctx, { tunnel_id: t.id })).toEqual({ deleted: t.id });
    expect(await listTunnels(palace.ctx)).toEqual([]);
    expect((await rejectionOf(deleteTunnel(palace.ctx, { tunnel_id: '' }))).message).toBe('tunnel_id is required');
    expect((await rejectionOf(deleteTunnel(palace.ctx, { tunnel_id: 5 }))).field).toBe('tunnel_id');
  });
});

describe('follow_tunnels', () => {
  it('lists outgoing and incoming connections with previews of recorded drawers', async () => {
    const t1 = await createTunnel(palace.ctx, { ...base, label: 'pays', target_drawer_id: 'drawer_target' });
    const t2 = await createTunnel(palace.ctx, { source_wing: 'My Wing', source_room: 'notes', target_wing: 'alpha', target_room: 'auth',
      source_drawer_id: 'drawer_logical' });
    const t3 = await createTunnel(palace.ctx, { source_wing: 'beta', source_room: 'billing', target_wing: 'My Wing', target_room: 'notes',
      target_drawer_id: 'drawer_gone' });
    const fromAuth = await followTunnels(palace.ctx, { wing: 'Alpha', room: 'auth' });
    expect(fromAuth).toEqual([
      { direction: 'outgoing', connected_wing: 'beta', connected_room: 'billing', label: 'pays', drawer_id: 'drawer_target', tunnel_id: t1.id,
        drawer_preview: `${'😀'.repeat(10)}${'x'.repeat(290)}` },
      { direction: 'incoming', connected_wing: 'My Wing', connected_room: 'notes', label: '', drawer_id: 'drawer_logical', tunnel_id: t2.id,
        drawer_preview: 'first half, second half' },
    ]);
    const fromNotes = await followTunnels(palace.ctx, { wing: 'my_wing', room: 'notes' });
    expect(fromNotes.map((c) => [c.direction, c.connected_wing, c.drawer_id, 'drawer_preview' in c])).toEqual([
      ['outgoing', 'alpha', null, false],
      ['incoming', 'beta', null, false],
    ]);
    expect(t3.target.drawer_id).toBe('drawer_gone');
    const fromBilling = await followTunnels(palace.ctx, { wing: 'beta', room: 'billing' });
    expect(fromBilling.find((c) => c.tunnel_id === t3.id)).toEqual({ direction: 'outgoing', connected_wing: 'My Wing', connected_room: 'notes', label: '',
      drawer_id: 'drawer_gone', tunnel_id: t3.id });
  });

  it('compares the room exactly and returns [] when nothing connects', async () => {
    await createTunnel(palace.ctx, base);
    expect(await followTunnels(palace.ctx, { wing: 'alpha', room: 'Auth' })).toEqual([]);
    expect((await rejectionOf(followTunnels(palace.ctx, { wing: 'alpha', room: '' }))).field).toBe('room');
  });
});

describe('tunnels made by mining', () => {
  const topics = { alpha: ['Auth', 'Billing'], Beta: ['auth', 'Search', 'BILLING'], gamma: ['search'], delta: [] };

  it('links the mined wing to every wing sharing topics, source = first slug, its spelling', async () => {
    const made = await buildTopicTunnels(palace.ctx, 'beta', topics);
    expect(made.map((t) => [t.source.wing, t.source.room, t.target.wing, t.target.room, t.label, t.kind])).toEqual([
      ['alpha', 'topic:Auth', 'beta', 'topic:Auth', 'shared topic: Auth', 'topic'],
      ['alpha', 'topic:Billing', 'beta', 'topic:Billing', 'shared topic: Billing', 'topic'],
      ['beta', 'topic:Search', 'gamma', 'topic:Search', 'shared topic: Search', 'topic'],
    ]);
    expect(made[0]!.id).toBe(hashN('alpha/topic:Auth↔beta/topic:Auth', 16));
    // Re-mining the other wing of a pair re-creates, never duplicates.
    await buildTopicTunnels(palace.ctx, 'alpha', topics);
    expect((await listTunnels(palace.ctx)).length).toBe(3);
  });

  it('needs at least min_count shared topics per wing pair', async () => {
    expect((await buildTopicTunnels(palace.ctx, 'beta', topics, 2)).map((t) => t.target.wing)).toEqual(['beta', 'beta']);
    expect(await buildTopicTunnels(palace.ctx, 'delta', topics)).toEqual([]);
    expect(await buildTopicTunnels(palace.ctx, 'unknown', topics)).toEqual([]);
  });

  it('links wings whose hallways share an entity', async () => {
    const hallway = (wing: string, a: string, b: string) => ({ id: `h_${wing}_${a}_${b}`, wing, entity_a: a, entity_b: b, co_occurrence_count: 2, rooms: [],
      label: '', created_at: '2031-01-01T00:00:00+00:00', created_by: 'auto' });
    await palace.ctx.graph.hallwaysReplaceWing('beta', [hallway('beta', 'Amy', 'Bob'), hallway('beta', 'Bob', 'Zed')]);
    await palace.ctx.graph.hallwaysReplaceWing('alpha', [hallway('alpha', 'Amy', 'Cat')]);
    await palace.ctx.graph.hallwaysReplaceWing('gamma', [hallway('gamma', 'Bob', 'Cat'), hallway('gamma', 'Amy', 'Dan')]);
    const made = await buildEntityTunnels(palace.ctx, 'beta');
    expect(made.map((t) => [t.source.wing, t.target.wing, t.source.room, t.label, t.kind])).toEqual([
      ['alpha', 'beta', 'entity:Amy', 'shared entity: Amy', 'entity'],
      ['beta', 'gamma', 'entity:Amy', 'shared entity: Amy', 'entity'],
      ['beta', 'gamma', 'entity:Bob', 'shared entity: Bob', 'entity'],
    ]);
    expect(await buildEntityTunnels(palace.ctx, 'nowhere')).toEqual([]);
  });
});
