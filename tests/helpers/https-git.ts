/**
 * A git server over https on loopback that wants HTTP basic credentials — the kind of host a
 * token-in-URL source points at: a self-signed certificate (trusted through a HOME whose
 * .gitconfig names it, since the hardened runner passes HOME and nothing of GIT_*), and
 * `git http-backend` behind a check of the Authorization header. It records the user names it
 * was sent and, during the first authenticated request, every process's command line (`ps`).
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface HttpsGitServer {
  port: number;
  /** A HOME directory whose .gitconfig trusts the server's certificate. */
  home: string;
  /** Decoded `user:password` of every authenticated request. */
  authorizations: string[];
  /** `ps -eo args` taken while git was fetching. */
  processList: string;
  close(): Promise<void>;
}

export async function httpsGitServer(root: string, projectRoot: string, user: string, password: string): Promise<HttpsGitServer> {
  const home = path.join(root, 'home');
  await fs.mkdir(home, { recursive: true });
  const key = path.join(root, 'key.pem');
  const cert = path.join(root, 'cert.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext',
    'subjectAltName=IP:127.0.0.1']);
  await fs.writeFile(path.join(home, '.gitconfig'), `[http]\n\tsslCAInfo = ${cert}\n`);
  const expected = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const state = { authorizations: [] as string[], processList: '' };
  const server = https.createServer({ key: await fs.readFile(key), cert: await fs.readFile(cert) }, (req, res) => {
    const auth = req.headers.authorization;
    if (auth !== expected) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="git"' }).end();
      return;
    }
    state.authorizations.push(Buffer.from(auth.slice('Basic '.length), 'base64').toString('utf8'));
    void (async () => {
      if (state.processList === '') state.processList = (await run('ps', ['-eo', 'args'])).stdout;
      const url = new URL(req.url ?? '/', 'https://127.0.0.1');
      const cgi = spawn('git', ['http-backend'], {
        env: {
          ...process.env,
          GIT_PROJECT_ROOT: projectRoot,
          GIT_HTTP_EXPORT_ALL: '1',
          PATH_INFO: url.pathname,
          QUERY_STRING: url.search.slice(1),
          REQUEST_METHOD: req.method ?? 'GET',
          CONTENT_TYPE: req.headers['content-type'] ?? '',
          REMOTE_USER: user,
          REMOTE_ADDR: '127.0.0.1',
        },
      });
      req.pipe(cgi.stdin);
      let head = Buffer.alloc(0);
      let body = false;
      cgi.stdout.on('data', (chunk: Buffer) => {
        if (body) return void res.write(chunk);
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        body = true;
        const headers: Record<string, string> = {};
        let status = 200;
        for (const line of head.subarray(0, end).toString('utf8').split('\r\n')) {
          const i = line.indexOf(':');
          const name = line.slice(0, i).trim().toLowerCase();
          const value = line.slice(i + 1).trim();
          if (name === 'status') status = Number(value.split(' ')[0]);
          else headers[name] = value;
        }
        res.writeHead(status, headers);
        res.write(head.subarray(end + 4));
      });
      cgi.on('close', () => res.end());
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    home,
    get authorizations() {
      return state.authorizations;
    },
    get processList() {
      return state.processList;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
