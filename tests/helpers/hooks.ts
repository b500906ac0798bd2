/**
 * Helpers of the webhook and notification tests: a local git repository (bare origin plus a
 * working clone) to push to, signed GitHub push deliveries, and a local HTTP listener that
 * records notifications and answers with a programmable status.
 */
import { execFile } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  return stdout.trim();
}

export interface LocalRepo {
  /** `file://` URL of the bare origin: what a source is registered with and a payload names. */
  url: string;
  work: string;
  /** Write files (path → text), commit and push to main; returns the new commit. */
  commit(files: Record<string, string>, message: string): Promise<string>;
}

export async function localRepo(root: string): Promise<LocalRepo> {
  const origin = path.join(root, 'origin.git');
  const work = path.join(root, 'work');
  await fs.mkdir(origin, { recursive: true });
  await git(origin, 'init', '--quiet', '--bare', '--initial-branch=main');
  await git(root, 'clone', '--quiet', origin, work);
  await git(work, 'checkout', '--quiet', '-B', 'main');
  return {
    url: `file://${origin}`,
    work,
    async commit(files, message) {
      for (const [rel, text] of Object.entries(files)) {
        await fs.mkdir(path.dirname(path.join(work, rel)), { recursive: true });
        await fs.writeFile(path.join(work, rel), text);
      }
      await git(work, 'add', '-A');
      await git(work, 'commit', '--quiet', '-m', message);
      await git(work, 'push', '--quiet', 'origin', 'main');
      return git(work, 'rev-parse', 'HEAD');
    },
  };
}

/** Distinct short prose files, `count` of them under `dir/`. */
export function proseFiles(dir: string, count: number, tag: string): Record<string, string> {
  const words = ['webhook', 'refresh', 'debounce', 'source', 'commit', 'palace', 'drawer', 'wing', 'notify', 'signature', 'retry', 'queue'];
  const out: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const body = Array.from({ length: 14 }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ');
    out[`${dir}/note-${tag}-${i}.md`] = `# Note ${tag} ${i}\n\nThe ${body} of note ${i} in ${tag}.\n`;
  }
  return out;
}

export function githubPush(repoUrl: string, after: string, secret: string, ref = 'refs/heads/main'): { rawBody: string; headers: Record<string, string> } {
  const rawBody = JSON.stringify({ ref, before: '0'.repeat(40), after, repository: { clone_url: repoUrl, full_name: 'local/repo' }, pusher: { name: 't' } });
  return {
    rawBody,
    headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID(),
      'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}` },
  };
}

export interface ReceivedNotification {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The status the listener answered with. */
  status: number;
}

export interface Listener {
  url: string;
  received: ReceivedNotification[];
  /** Status for the next request; by default 200. */
  answer: (req: ReceivedNotification) => number;
  close(): Promise<void>;
}

export async function listener(): Promise<Listener> {
  const state: Listener = { url: '', received: [], answer: () => 200, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: ReceivedNotification = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status: 0 };
      got.status = state.answer(got);
      state.received.push(got);
      res.writeHead(got.status, { 'content-type': 'text/plain' }).end(got.status === 200 ? 'ok' : 'failing on purpose');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  state.close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return state;
}

/** An answer that fails the first attempt of every delivery (500) and accepts its retry (200). */
export function failFirstAttempt(): (n: ReceivedNotification) => number {
  const seen = new Set<string>();
  return (n) => {
    const id = String(n.headers['x-mempalace-delivery']);
    if (seen.has(id)) return 200;
    seen.add(id);
    return 500;
  };
}

export function validSignature(n: ReceivedNotification, secret: string): boolean {
  return n.headers['x-mempalace-signature-256'] === `sha256=${createHmac('sha256', secret).update(n.body).digest('hex')}`;
}

export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
