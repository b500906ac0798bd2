/** A mine request as tests send it: a directory, projects mode, every file, nothing dry. */
import type { MineSpec } from '../../jobs/job.js';

export function dirMineSpec(source: string, wing: string, agent: string, over: Partial<MineSpec> = {}): MineSpec {
  return {
    kind: 'mine',
    source: { kind: 'dir', path: source },
    mode: 'projects',
    wing,
    agent,
    limit: 0,
    dryRun: false,
    extract: 'exchange',
    respectGitignore: true,
    includeIgnored: [],
    ...over,
  };
}
