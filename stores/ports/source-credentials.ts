/**
 * The source credential store port: the secrets split off source URLs (core/url-credentials.ts),
 * kept apart from every record that is listed, exported or replayed (sources, job specs, drawers,
 * workflow inputs), keyed by the URL without its credential. Git reads one only at clone/fetch
 * time (jobs/source/git.ts). Implemented by `embedded/` (a 0600 file in the palace) and `redis/`
 * (a hash of the palace, so every worker that clones can read it).
 */
import type { GitCredential } from '../../core/url-credentials.js';

export interface SourceCredentials {
  /** Keep `credential` for `url` (a URL without user-info), replacing an older one. */
  put(url: string, credential: GitCredential): Promise<void>;
  get(url: string): Promise<GitCredential | undefined>;
  /** False when none was kept for `url`. */
  remove(url: string): Promise<boolean>;
  close(): Promise<void>;
}
