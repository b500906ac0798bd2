import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf } from '../helpers/errors.js';
import { findTunnelsOperation, graphStatsOperation, traverseOperation } from '../../palace/graph/room-graph.js';
import { createTunnelOperation } from '../../palace/graph/tunnels.js';
import type { GraphPalace } from './graph-fixtures.js';
import { openGraphPalace } from './graph-fixtures.js';
import { operationCall } from '../helpers/operation-call.js';

const findTunnels = operationCall(findTunnelsOperation);
const graphStats = operationCall(graphStatsOperation);
const traverse = operationCall(traverseOperation);
const createTunnel = operationCall(createTunnelOperation);

let palace: GraphPalace;

// alpha: auth ×3 (technical), general ×1, ops ×1 (memory)
// beta:  auth ×1 (technical) + ×1 (emotions), billing ×2 (technical, one dated)
// gamma: billing ×1 (creative, dated), notes ×1
// delta: solo ×1 (an island)
beforeEach(async () => {
  palace = await openGraphPalace();
  await palace.file([
    { wing: 'alpha', room: 'auth', hall: 'technical' },
    { wing: 'alpha', room: 'auth', hall: 'technical' },
    { wing: 'alpha', room: 'auth', hall: 'technical' },
    { wing: 'alpha', room: 'general' },
    { wing: 'alpha', room: 'ops', hall: 'memory' },
    { wing: 'beta', room: 'auth', hall: 'technical' },
    { wing: 'beta', room: 'auth', hall: 'emotions' },
    { wing: 'beta', room: 'billing', hall: 'technical', date: '2026-01-15' },
    { wing: 'beta', room: 'billing', hall: 'technical' },
    { wing: 'gamma', room: 'billing', hall: 'creative', date: '2026-02-01' },
    { wing: 'gamma', room: 'notes' },
    { wing: 'delta', room: 'solo' },
  ]);
});
afterEach(async () => {
  await palace.cleanup();
});

describe('traverse', () => {
  it('walks breadth-first through shared wings, sorted by hop then count', async () => {
    expect(await traverse(palace.ctx, { start_room: 'ops' })).toEqual([
      { room: 'ops', wings: ['alpha'], halls: ['memory'], count: 1, hop: 0 },
      { room: 'auth', wings: ['alpha', 'beta'], halls: ['emotions', 'technical'], count: 5, hop: 1, connected_via: ['alpha'] },
      { room: 'general', wings: ['alpha'], halls: [], count: 1, hop: 1, connected_via: ['alpha'] },
      { room: 'billing', wings: ['beta', 'gamma'], halls: ['creative', 'technical'], count: 3, hop: 2, connected_via: ['beta'] },
    ]);
  });

  it('goes as far as max_hops, clamped into 1..10, and never reaches an island', async () => {
    const rooms = async (max_hops: unknown) => (await traverse(palace.ctx, { start_room: 'ops', max_hops })).map((s) => `${s.room}@${s.hop}`);
    expect(await rooms(3)).toEqual(['ops@0', 'auth@1', 'general@1', 'billing@2', 'notes@3']);
    expect(await rooms(0)).toEqual(['ops@0', 'auth@1', 'general@1']);
    expect(await rooms(99)).toEqual(['ops@0', 'auth@1', 'general@1', 'billing@2', 'notes@3']);
    expect((await rejectionOf(traverse(palace.ctx, { start_room: 'ops', max_hops: 'two' }))).field).toBe('max_hops');
  });

  it('reports a missing room with suggestions: substring matches first, then word matches', async () => {
    const e = await rejectionOf(traverse(palace.ctx, { start_room: 'bill' }));
    expect(e.message).toBe("Room 'bill' not found");
    expect(e.details).toEqual({ suggestions: ['billing'] });
    const words = await rejectionOf(traverse(palace.ctx, { start_room: 'no-auth-te' }));
    expect(words.details).toEqual({ suggestions: ['auth', 'notes'] });
    expect((await rejectionOf(traverse(palace.ctx, { start_room: '' }))).field).toBe('start_room');
    expect((await rejectionOf(traverse(palace.ctx, { start_room: 'a\0' }))).rule).toBe('null_bytes');
    expect((await rejectionOf(traverse(palace.ctx, { start_room: 'r'.repeat(129) }))).rule).toBe('max_length');
  });

  it('sees new drawers at once', async () => {
    await traverse(palace.ctx, { start_room: 'solo' });
    await palace.file([{ wing: 'delta', room: 'auth', hall: 'identity' }]);
    const [, ...rest] = await traverse(palace.ctx, { start_room: 'solo', max_hops: 1 });
    expect(rest).toEqual([{ room: 'auth', wings: ['alpha', 'beta', 'delta'], halls: ['emotions', 'identity', 'technical'], count: 6, hop: 1,
      connected_via: ['delta'] }]);
  });
});

describe('find_tunnels', () => {
  it('lists multi-wing rooms by count, with the latest date as recent', async () => {
    expect(await findTunnels(palace.ctx)).toEqual([
      { room: 'auth', wings: ['alpha', 'beta'], halls: ['emotions', 'technical'], count: 5, recent: '' },
      { room: 'billing', wings: ['beta', 'gamma'], halls: ['creative', 'technical'], count: 3, recent: '2026-02-01' },
    ]);
  });

  it('keeps rooms containing every given wing, compared by slug', async () => {
    expect((await findTunnels(palace.ctx, { wing_a: 'Gamma' })).map((t) => t.room)).toEqual(['billing']);
    expect((await findTunnels(palace.ctx, { wing_a: 'beta', wing_b: 'alpha' })).map((t) => t.room)).toEqual(['auth']);
    expect(await findTunnels(palace.ctx, { wing_a: 'alpha', wing_b: 'gamma' })).toEqual([]);
    expect((await findTunnels(palace.ctx, { wing_a: '  ', wing_b: null })).length).toBe(2);
    expect((await rejectionOf(findTunnels(palace.ctx, { wing_b: 'a/b' }))).message).toBe('wing_b contains invalid path characters');
  });
});

describe('graph_stats', () => {
  it('counts rooms, tunnel rooms, hall edges, rooms per wing and top tunnels, with explicit tunnels', async () => {
    await createTunnel(palace.ctx, { source_wing: 'alpha', source_room: 'ops', target_wing: 'delta', target_room: 'solo' });
    const stats = await graphStats(palace.ctx);
    expect(stats).toEqual({
      total_rooms: 6,
      tunnel_rooms: 2,
      // auth: 1 wing pair × 2 halls; billing: 1 wing pair × 2 halls
      total_edges: 4,
      rooms_per_wing: { alpha: 3, beta: 2, gamma: 2, delta: 1 },
      top_tunnels: [
        { room: 'auth', wings: ['alpha', 'beta'], count: 5 },
        { room: 'billing', wings: ['beta', 'gamma'], count: 3 },
      ],
      total_room_instances: 8,
      passive_tunnel_rooms: 2,
      explicit_tunnels: 1,
      total_connections: 5,
    });
    expect(Object.keys(stats.rooms_per_wing)).toEqual(['alpha', 'beta', 'gamma', 'delta']);
  });

  it('is all zeros on an empty palace', async () => {
    const empty = await openGraphPalace();
    try {
      expect(await graphStats(empty.ctx)).toEqual({
        total_rooms: 0,
        tunnel_rooms: 0,
        total_edges: 0,
        rooms_per_wing: {},
        top_tunnels: [],
        total_room_instances: 0,
        passive_tunnel_rooms: 0,
        explicit_tunnels: 0,
        total_connections: 0,
      });
      expect(await findTunnels(empty.ctx)).toEqual([]);
    } finally {
      await empty.cleanup();
    }
  });
});
