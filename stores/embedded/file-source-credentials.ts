/**
 * The embedded profile's source credentials: one JSON file in the palace directory, created and
 * kept at mode 0600 (only the palace's owner reads it), replaced atomically on every change.
 * It is not one of the files backups or exports read (they read the stores' records).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { GitCredential } from '../../core/url-credentials.js';
import type { SourceCredentials } from '../ports/source-credentials.js';

export const CREDENTIALS_FILE = 'source-credentials.json';

type Stored = Record<string, GitCredential>;

export class FileSourceCredentials implements SourceCredentials {
  private readonly file: string;
  /** Changes made by this process, one at a time (read, change, write). */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(palaceDir: string) {
    this.file = path.join(palaceDir, CREDENTIALS_FILE);
  }

  private async read(): Promise<Stored> {
    const text = await fs.readFile(this.file, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '{}';
      throw e;
    });
    return JSON.parse(text) as Stored;
  }

  private change(edit: (stored: Stored) => boolean): Promise<boolean> {
    const run = this.queue.then(async () => {
      const stored = await this.read();
      if (!edit(stored)) return false;
      const tmp = `${this.file}.${process.pid}.tmp`;
      await fs.writeFile(tmp, JSON.stringify(stored), { mode: 0o600 });
      await fs.chmod(tmp, 0o600);
      await fs.rename(tmp, this.file);
      return true;
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async put(url: string, credential: GitCredential): Promise<void> {
    await this.change((s) => {
      s[url] = { username: credential.username, password: credential.password };
      return true;
    });
  }

  async get(url: string): Promise<GitCredential | undefined> {
    return (await this.read())[url];
  }

  remove(url: string): Promise<boolean> {
    return this.change((s) => {
      if (!(url in s)) return false;
      delete s[url];
      return true;
    });
  }

  async close(): Promise<void> {
    await this.queue;
  }
}
