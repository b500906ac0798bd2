/**
 * The audit trail's hash chain: each record's hash is sha256 over the previous record's hash and
 * the record's canonical JSON (keys sorted, no `hash` field), so a removed or edited record
 * breaks every hash after it. Shared by the adapters that append and by `mempalace audit verify`.
 */
import { createHash } from 'node:crypto';

/** The `prev_hash` of the first record of a palace's trail. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys in code-point order at every depth; `undefined` members are left out, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** The hash of a record whose fields (everything but `hash`, `prev_hash` included) are `body`. */
export function chainHash(prevHash: string, body: object): string {
  return createHash('sha256').update(prevHash).update('\n').update(canonicalJson(body)).digest('hex');
}
