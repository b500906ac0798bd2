/**
 * A real `mempalace serve` child process for the mesh tests (tests/e2e/mesh*.test.ts): started
 * on loopback with a 0.3 s sync interval, an admin token for the test and a replicate token for
 * its peers, restartable on the same port, and driven through MCP over HTTP.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { StoredEvent } from '../../stores/ports/logstream/records.js';
import { stopChild } from './processes.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TSX = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');

export interface ServerSpec {
  name: string;
  palaceDir: string;
  env: Record<string, string>;
  /** The test's admin token and the token peers present (scope `replicate`). */
  adminToken: string;
  peerToken: string;
  /** A file for MEMPALACE_ENTITY_REGISTRY that need not exist. */
  entityRegistry: string;
}

export interface MeshSelf {
  replica_id: string;
  public_key: string;
  version_vector: Record<string, number>;
}

export class Served {
  private proc: ChildProcess | null = null;
  private client: Client | null = null;
  url = '';
  port = 0;
  stderr = '';

  constructor(readonly spec: ServerSpec) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    const proc = spawn(process.execPath, [TSX, path.join(ROOT, 'cli', 'main.ts'), 'serve', '--port', String(this.port)], {
      cwd: ROOT,
      env: {
        ...process.env,
        MEMPALACE_PALACE: this.spec.palaceDir,
        MEMPALACE_SYNC_INTERVAL: '0.3',
        MEMPALACE_API_TOKENS: `${this.spec.adminToken}=ops:admin,${this.spec.peerToken}=peer:replicate`,
        MEMPALACE_REPLICA_NAME: this.spec.name,
        MEMPALACE_ENTITY_REGISTRY: this.spec.entityRegistry,
        ...this.spec.env,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc = proc;
    this.url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.spec.name} did not start:\n${this.stderr}`)), 180_000);
      proc.stderr!.setEncoding('utf8');
      proc.stderr!.on('data', (chunk: string) => {
        this.stderr += chunk;
        const m = /mempalace serve: (http:\/\/\S+)/.exec(this.stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`${this.spec.name} exited with ${code}:\n${this.stderr}`));
      });
    });
    this.port = Number(new URL(this.url).port);
  }

  async stop(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    this.client = null;
    await stopChild(this.proc, 'SIGTERM');
    this.proc = null;
  }

  async tool(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    if (!this.client) {
      const client = new Client({ name: 'mesh-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${this.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${this.spec.adminToken}` } } }),
      );
      this.client = client;
    }
    const result = await this.client.callTool({ name, arguments: args });
    return result.structuredContent as Record<string, unknown>;
  }

  async events(): Promise<StoredEvent[]> {
    return (await this.tool('mempalace_event_list', { limit: 500 })).events as StoredEvent[];
  }

  async estate(): Promise<{ self: MeshSelf; peers: Record<string, unknown>[] }> {
    return (await this.tool('mempalace_mesh_peers')) as never;
  }

  /** Resident memory of the server: the process and its descendants (tsx runs the server in a child), from /proc (Linux). */
  rssBytes(): number {
    const rss = (pid: string): number => {
      let total = 0;
      try {
        total = Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
        for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
          for (const child of fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean)) total += rss(child);
        }
      } catch {
        // A process that exited meanwhile holds no memory.
      }
      return total;
    };
    return rss(String(this.pid));
  }
}

export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A peers-file entry for `peer`: its url, the token to present, its replica id and public key. */
export async function peerEntry(peer: Served): Promise<Record<string, string>> {
  const { self } = await peer.estate();
  return { name: peer.spec.name, url: peer.url, token: peer.spec.peerToken, replica_id: self.replica_id, public_key: self.public_key };
}

export function writePeersFile(server: Served, doc: { peers: Record<string, string>[]; origins?: { replica_id: string; public_key: string }[] }): void {
  fs.mkdirSync(server.spec.palaceDir, { recursive: true });
  fs.writeFileSync(path.join(server.spec.palaceDir, 'peers.json'), JSON.stringify(doc));
}
