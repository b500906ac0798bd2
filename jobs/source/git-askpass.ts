/**
 * How a source credential reaches git: never on its command line or in a URL (both visible to
 * `ps` and written to git's errors), but through GIT_ASKPASS — a script in a private temporary
 * directory (0700) that prints the user name or the password from files beside it (0600), made
 * for one command and removed when it ends.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { GitCredential } from '../../core/url-credentials.js';

const SCRIPT = `#!/bin/sh
dir=$(dirname "$0")
case "$1" in
  Username*) cat "$dir/username" ;;
  *) cat "$dir/password" ;;
esac
`;

export interface Askpass {
  /** Environment git needs to ask the script. */
  env: Record<string, string>;
  /** `-c` settings: no credential helper may answer instead, or store the credential. */
  config: string[];
  dispose(): Promise<void>;
}

export async function askpassFor(credential: GitCredential): Promise<Askpass> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'mempalace-askpass-'));
  try {
    await fs.chmod(dir, 0o700);
    await fs.writeFile(path.join(dir, 'username'), credential.username, { mode: 0o600 });
    await fs.writeFile(path.join(dir, 'password'), credential.password, { mode: 0o600 });
    await fs.writeFile(path.join(dir, 'askpass'), SCRIPT, { mode: 0o700 });
  } catch (e) {
    await fs.rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    env: { GIT_ASKPASS: path.join(dir, 'askpass') },
    config: ['credential.helper='],
    dispose: () => fs.rm(dir, { recursive: true, force: true }),
  };
}
