/**
 * The lint rules that enforce ARCHITECTURE.md's arrows (eslint.config.js, per-folder
 * `no-restricted-imports` and `no-restricted-syntax` for `import()`, and the workflow sandbox of
 * jobs/): a back-arrow placed in a folder is an error, the allowed arrow beside it is not. Each probe is linted as if it were a
 * file of that folder (ESLint's `lintText` with a file path), so the tree itself is untouched.
 */
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const LAYER_RULES = new Set(['no-restricted-imports', 'no-restricted-syntax', 'mempalace/workflow-sandbox']);
const eslint = new ESLint({ cwd: ROOT });

async function layeringErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId !== null && LAYER_RULES.has(m.ruleId)).map((m) => m.message);
}

const typeImport = (from: string) => `import type { Anything } from '${from}';\nexport type Probe = Anything;\n`;
const valueImport = (from: string) => `import probe from '${from}';\nexport const used = probe;\n`;
const dynamicImport = (from: string) => `export const load = () => import('${from}');\n`;

describe('the layering lint rule', () => {
  it('refuses mcp/ and api/ importing cli/ or app/, statically or with import()', async () => {
    const [cli] = await layeringErrors('mcp/layering-probe.ts', typeImport('../cli/commands/context.js'));
    expect(cli).toContain('ARCHITECTURE.md');
    expect(await layeringErrors('mcp/tools/layering-probe.ts', typeImport('../../app/runtime.js'))).toHaveLength(1);
    expect(await layeringErrors('api/layering-probe.ts', typeImport('../app/runtime.js'))).toHaveLength(1);
    expect(await layeringErrors('api/routes/layering-probe.ts', dynamicImport('../../cli/main.js'))).toHaveLength(1);
    expect(await layeringErrors('mcp/layering-probe.ts', typeImport('../palace/runtime.js'))).toEqual([]);
    expect(await layeringErrors('api/layering-probe.ts', typeImport('../core/caller.js'))).toEqual([]);
  });

  it('keeps palace/ on core/, embed/ and the ports of stores/, the JobEngine port included', async () => {
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../jobs/engines/local/runner.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../jobs/activities.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../jobs/mine/orchestration.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../jobs/job.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../stores/ports/job-engine.js'))).toEqual([]);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../stores/embedded/sqlite-locks.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../stores/open.js'))).toHaveLength(1);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../stores/ports/drawers/drawer-index.js'))).toEqual([]);
    expect(await layeringErrors('palace/layering-probe.ts', typeImport('../embed/embedder.js'))).toEqual([]);
  });

  it('lets only stores/<adapter>/ import a database client, and only app/ and stores/open.ts pick adapters', async () => {
    for (const client of ['better-sqlite3', 'ioredis', 'neo4j-driver', '@opensearch-project/opensearch']) {
      expect(await layeringErrors('palace/layering-probe.ts', valueImport(client)), client).toHaveLength(1);
      expect(await layeringErrors('stores/ports-probe.ts', valueImport(client)), client).toHaveLength(1);
    }
    expect(await layeringErrors('stores/redis/layering-probe.ts', valueImport('ioredis'))).toEqual([]);
    expect(await layeringErrors('stores/embedded/layering-probe.ts', valueImport('better-sqlite3'))).toEqual([]);
    expect(await layeringErrors('cli/layering-probe.ts', valueImport('../stores/redis/redis-locks.js'))).toHaveLength(1);
    expect(await layeringErrors('stores/open.ts', valueImport('./redis/redis-locks.js'))).toEqual([]);
  });

  it('keeps the Temporal and BullMQ SDKs in their engine folders, and core/ free of the project', async () => {
    expect(await layeringErrors('jobs/engines/local/layering-probe.ts', valueImport('@temporalio/workflow'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/temporal/layering-probe.ts', valueImport('@temporalio/workflow'))).toHaveLength(1);
    expect(await layeringErrors('jobs/mine/layering-probe.ts', valueImport('@temporalio/activity'))).toHaveLength(1);
    expect(await layeringErrors('app/layering-probe.ts', valueImport('@temporalio/worker'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/temporal/layering-probe.ts', valueImport('@temporalio/worker'))).toEqual([]);
    expect(await layeringErrors('mcp/layering-probe.ts', valueImport('bullmq'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/queues/layering-probe.ts', valueImport('bullmq'))).toEqual([]);
    expect(await layeringErrors('jobs/engines/queues/layering-probe.ts', valueImport('../../../stores/redis/connection.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/queues/layering-probe.ts', valueImport('../../../stores/shared/redis-address.js'))).toEqual([]);
    expect(await layeringErrors('core/layering-probe.ts', typeImport('../jobs/job.js'))).toHaveLength(1);
    expect(await layeringErrors('core/chat/layering-probe.ts', typeImport('../errors.js'))).toEqual([]);
  });

  it('keeps core/ pure: no file, process or host I/O, statically or with import()', async () => {
    for (const io of ['node:fs', 'node:fs/promises', 'fs', 'node:child_process', 'child_process', 'node:os', 'os']) {
      const [error] = await layeringErrors('core/layering-probe.ts', valueImport(io));
      expect(error, io).toContain('does no I/O');
    }
    expect(await layeringErrors('core/chat/layering-probe.ts', dynamicImport('node:fs/promises'))).toHaveLength(1);
    expect(await layeringErrors('core/layering-probe.ts', valueImport('node:path'))).toEqual([]);
    expect(await layeringErrors('palace/sources/layering-probe.ts', valueImport('node:fs/promises'))).toEqual([]);
    expect(await layeringErrors('embed/layering-probe.ts', valueImport('node:os'))).toEqual([]);
  });

  it('lets the engines import the job kinds, and never the other way', async () => {
    expect(await layeringErrors('jobs/mine/layering-probe.ts', typeImport('../engines/temporal/worker.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/layering-probe.ts', valueImport('./engines/local/runner.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/sync/layering-probe.ts', dynamicImport('../engines/queues/queues.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/local/layering-probe.ts', valueImport('../temporal/job-engine.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/engines/temporal/layering-probe.ts', typeImport('../../activities.js'))).toEqual([]);
    expect(await layeringErrors('jobs/engines/local/layering-probe.ts', valueImport('../../mine/orchestration.js'))).toEqual([]);
    expect(await layeringErrors('jobs/mine/layering-probe.ts', valueImport('../../palace/graph/hallways.js'))).toEqual([]);
    expect(await layeringErrors('mcp/layering-probe.ts', typeImport('../jobs/engines/temporal/job-engine.js'))).toHaveLength(1);
    expect(await layeringErrors('api/routes/layering-probe.ts', valueImport('../../jobs/mine/activities.js'))).toHaveLength(1);
    expect(await layeringErrors('cli/layering-probe.ts', valueImport('../jobs/engines/local/runner.js'))).toHaveLength(1);
    expect(await layeringErrors('api/routes/layering-probe.ts', valueImport('../../jobs/requests.js'))).toEqual([]);
  });

  it('keeps the workflow sandbox to @temporalio/workflow, the orchestration files and types', async () => {
    const [outside] = await layeringErrors('jobs/mine/workflow.ts', valueImport('../../palace/sources/sources.js'));
    expect(outside).toContain('workflow sandbox');
    expect(await layeringErrors('jobs/mine/orchestration.ts', valueImport('../fence.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/workflow-run.ts', valueImport('node:fs'))).toHaveLength(1);
    expect(await layeringErrors('jobs/sync/orchestration.ts', dynamicImport('./activities.js'))).toHaveLength(1);
    expect(await layeringErrors('jobs/reembed/workflow.ts', `export { stopIfAborted } from '../cancellation.js';\n`)).toHaveLength(1);
    expect(await layeringErrors('jobs/mine/workflow.ts', valueImport('@temporalio/workflow'))).toEqual([]);
    expect(await layeringErrors('jobs/mine/workflow.ts', valueImport('./orchestration.js'))).toEqual([]);
    expect(await layeringErrors('jobs/sync/workflow.ts', valueImport('../workflow-run.js'))).toEqual([]);
    expect(await layeringErrors('jobs/mine/orchestration.ts', valueImport('../progress.js'))).toEqual([]);
    expect(await layeringErrors('jobs/mine/orchestration.ts', typeImport('../../palace/sources/sources.js'))).toEqual([]);
    expect(await layeringErrors('jobs/mine/activities.ts', valueImport('../../palace/sources/sources.js'))).toEqual([]);
  });
});
