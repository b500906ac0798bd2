/** Tunnel records as tests expect them. */
import type { TunnelRecord } from '../../stores/ports/graph-store.js';

/** A tunnel just created at `at`: the given link and owner, with the default dynamics of docs/palace-behaviour.md §11.5. */
export function newTunnel(link: Omit<TunnelRecord, 'created_at' | 'strength' | 'stability' | 'last_activated' | 'access_count'>, at: string): TunnelRecord {
  return { ...link, created_at: at, strength: 1, stability: 1, last_activated: at, access_count: 0 };
}
