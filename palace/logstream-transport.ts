/**
 * The `https` transport of logstream.md §8.10 (the default, and the only one): one GET per
 * round trip with the peer's bearer token and a timeout of `MEMPALACE_SYNC_HTTP_TIMEOUT`
 * seconds. Plain `http://` urls work too (loopback peers, a TLS-terminating proxy in front).
 * The token goes only into the Authorization header — never into a url, a message or a log.
 */
import { PalaceError, invalidArgument } from '../core/errors.js';
import { peerLabel, type SyncPath, type SyncPeer, type SyncTransport } from './logstream-sync.js';

export const TRANSPORTS = ['https'] as const;

export class HttpsSyncTransport implements SyncTransport {
  constructor(private readonly timeoutMs: number) {}

  async request(peer: SyncPeer, path: SyncPath, params: Record<string, string>): Promise<{ status: number; body: unknown }> {
    const url = new URL(peer.url);
    const base = url.pathname.replace(/\/+$/, '');
    url.pathname = `${base}${path}`;
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (peer.token) headers.authorization = `Bearer ${peer.token}`;
    // User-info in the configured url is never sent as credentials; only the token authenticates.
    url.username = '';
    url.password = '';
    let res: Response;
    try {
      res = await fetch(url, { headers, signal: AbortSignal.timeout(this.timeoutMs), redirect: 'error' });
    } catch (e) {
      const reason = e instanceof Error && e.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : ((e as { cause?: { code?: string } }).cause?.code ?? (e instanceof Error ? e.message : String(e)));
      throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: ${reason}`, { retryable: true });
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, body };
  }
}

/** §8.10: any transport other than `https` fails loudly at startup rather than falling back. */
export function syncTransport(name: string, timeoutMs: number): SyncTransport {
  if (name !== 'https') throw invalidArgument('MEMPALACE_TRANSPORT', 'known_transport', `MEMPALACE_TRANSPORT=${name} is not supported; the only transport is https`);
  return new HttpsSyncTransport(timeoutMs);
}
