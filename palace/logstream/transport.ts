/**
 * The `https` transport of docs/logstream.md §8.10 (the default, and the only one): one GET per
 * round trip with the peer's bearer token and a timeout of `MEMPALACE_SYNC_HTTP_TIMEOUT`
 * seconds. Plain `http://` urls work too (loopback peers, a TLS-terminating proxy in front).
 * The token goes only into the Authorization header — never into a url, a message or a log.
 * An answer is read at most ANSWER_MAX_BYTES far (issue 24, M3): a larger one is cut off while
 * it streams in, never buffered whole.
 */
import { PalaceError, invalidArgument } from '../../core/errors.js';
import { peerLabel, type SyncPath, type SyncPeer, type SyncTransport } from './sync.js';

/** Fits one served page (at most 4 MiB of bodies, escaped) or one 4 MiB artifact escaped as JSON. */
export const ANSWER_MAX_BYTES = 32 * 1024 * 1024;

/** The body as text, refusing it once more than `max` bytes arrived. */
async function cappedText(res: Response, max: number, what: string): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw new PalaceError('too_large', `${what}: the answer declares ${declared} bytes; at most ${max} are read`, { rule: 'answer_max_bytes' });
  }
  if (!res.body) return '';
  const chunks: Buffer[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new PalaceError('too_large', `${what}: the answer passed ${max} bytes; the rest was not read`, { rule: 'answer_max_bytes' });
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class HttpsSyncTransport implements SyncTransport {
  constructor(private readonly timeoutMs: number, private readonly maxAnswerBytes = ANSWER_MAX_BYTES) {}

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
      const reason = e instanceof Error && e.name === 'TimeoutError'
        ? `no answer within ${this.timeoutMs} ms`
        : ((e as { cause?: { code?: string } }).cause?.code ?? (e instanceof Error ? e.message : String(e)));
      throw new PalaceError('store_unavailable', `${peerLabel(peer.url)}${path}: ${reason}`, { retryable: true });
    }
    const text = await cappedText(res, this.maxAnswerBytes, `${peerLabel(peer.url)}${path}`);
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, body };
  }
}

/** docs/logstream.md §8.10: any transport other than `https` fails loudly at startup rather than falling back. */
export function syncTransport(name: string, timeoutMs: number): SyncTransport {
  if (name !== 'https')
    throw invalidArgument('MEMPALACE_TRANSPORT', 'known_transport', `MEMPALACE_TRANSPORT=${name} is not supported; the only transport is https`);
  return new HttpsSyncTransport(timeoutMs);
}
