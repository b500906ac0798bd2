/**
 * A sync transport for replicas in one process: peers addressed as `mem://<name>` are answered
 * by the same palace functions the `/sync/*` routes call, with the answer passed through JSON as
 * over the wire. It can serve an artifact corrupted (a bad transfer), act as a peer that is down,
 * or let a test rewrite a peer's answers as a hostile peer would (`forge`).
 */
import { versionVectorPayload } from '../../palace/logstream/estate.js';
import { syncArtifact, syncOps, type SyncPeer, type SyncTransport } from '../../palace/logstream/sync.js';
import type { LogstreamReplication } from '../../stores/ports/logstream/replication.js';

export class InProcessTransport implements SyncTransport {
  readonly calls: string[] = [];
  /** Artifact ids to serve with altered content. */
  readonly tamper = new Set<string>();
  /** Peer names that refuse connections. */
  readonly down = new Set<string>();
  /** Rewrites the answers of the peer it names: what a hostile peer would send instead. */
  forge: { peer: string; answer: (path: string, params: Record<string, string>, body: Record<string, unknown>) => unknown } | null = null;
  constructor(readonly replicas: Map<string, LogstreamReplication>) {}

  async request(peer: SyncPeer, path: string, params: Record<string, string>): Promise<{ status: number; body: unknown }> {
    const name = peer.url.replace('mem://', '');
    if (this.down.has(name)) throw new Error(`${peer.url}: connection refused`);
    const store = this.replicas.get(name)!;
    this.calls.push(`${name}${path}${params.id ? `?id=${params.id}` : ''}`);
    const answer = await this.answer(store, name, path, params);
    if (this.forge?.peer !== name || answer.status !== 200) return answer;
    return { status: 200, body: this.forge.answer(path, params, JSON.parse(JSON.stringify(answer.body)) as Record<string, unknown>) };
  }

  private async answer(store: LogstreamReplication, name: string, path: string, params: Record<string, string>): Promise<{ status: number; body: unknown }> {
    try {
      if (path === '/sync/version_vector') return { status: 200, body: await versionVectorPayload(store, { replicaName: name }) };
      if (path === '/sync/ops') return { status: 200, body: JSON.parse(JSON.stringify(await syncOps(store, params))) };
      const body = await syncArtifact(store, params);
      if (this.tamper.has(params.id!)) body.artifact.content = `${String(body.artifact.content)}tampered`;
      return { status: 200, body };
    } catch (e) {
      return { status: (e as { code?: string }).code === 'not_found' ? 404 : 400, body: { error: (e as Error).message } };
    }
  }
}
