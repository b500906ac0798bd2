/**
 * One request model per job kind (jobs/requests.ts): the same bad input sent as an MCP
 * tool call and as a REST request is refused naming the same field, the same rule and the same
 * message, and starts nothing on either transport (no job record is written).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiHarness } from './api-harness.js';
import { startApi, tempDir } from './api-harness.js';

const ROUTE = { mine: '/v1/jobs/mine', sync: '/v1/jobs/sync', delete_by_source: '/v1/jobs/delete_by_source' } as const;

describe('MCP and REST refuse the same bad job request the same way', () => {
  let h: ApiHarness;
  let client: Client;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    root = tempDir('parity-root');
    outside = tempDir('parity-outside');
    fs.mkdirSync(path.join(root, 'project'));
    h = await startApi({ env: { MEMPALACE_ALLOWED_ROOTS: root } });
    client = await h.mcpClient('tok-admin');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('names the same field, rule and message for each bad input', async () => {
    const project = () => path.join(root, 'project');
    const cases: { kind: keyof typeof ROUTE; args: Record<string, unknown>; field: string; rule: string }[] = [
      { kind: 'mine', args: { source: 42 }, field: 'source', rule: 'type' },
      { kind: 'mine', args: { source: '   ' }, field: 'source', rule: 'non_empty_string' },
      { kind: 'mine', args: { source: project(), mode: 'bogus' }, field: 'mode', rule: 'enum' },
      { kind: 'mine', args: { source: project(), extract: 'all' }, field: 'extract', rule: 'enum' },
      { kind: 'mine', args: { source: project(), limit: -1 }, field: 'limit', rule: 'minimum' },
      { kind: 'mine', args: { source: project(), limit: 10_000_001 }, field: 'limit', rule: 'maximum' },
      { kind: 'mine', args: { source: project(), dry_run: 'yes' }, field: 'dry_run', rule: 'type' },
      { kind: 'mine', args: { source: project(), wing: ['a'] }, field: 'wing', rule: 'type' },
      { kind: 'mine', args: { source: project(), wing: 'a/b' }, field: 'wing', rule: 'path_characters' },
      { kind: 'mine', args: { source: project(), wing: 'w?' }, field: 'wing', rule: 'name_pattern' },
      { kind: 'mine', args: { source: outside }, field: 'source', rule: 'allowed_roots' },
      { kind: 'mine', args: { source: path.join(root, 'missing') }, field: 'source', rule: 'exists' },
      { kind: 'mine', args: { source: 'https://example.invalid/repo.git' }, field: 'source', rule: 'local_directory' },
      { kind: 'sync', args: { apply: true }, field: 'apply', rule: 'scope_required' },
      { kind: 'sync', args: { project_dir: outside }, field: 'project_dir', rule: 'allowed_roots' },
      { kind: 'sync', args: { wing: 7 }, field: 'wing', rule: 'type' },
      { kind: 'sync', args: { wing: 'a/b', apply: true }, field: 'wing', rule: 'path_characters' },
      { kind: 'sync', args: { apply: 'true' }, field: 'apply', rule: 'type' },
      { kind: 'delete_by_source', args: { source_file: '   ' }, field: 'source_file', rule: 'non_empty_string' },
      { kind: 'delete_by_source', args: { source_file: path.join(outside, 'a.md') }, field: 'source_file', rule: 'allowed_roots' },
      { kind: 'delete_by_source', args: { source_file: 'a.md', dry_run: 0 }, field: 'dry_run', rule: 'type' },
    ];
    for (const c of cases) {
      const label = `${c.kind} ${JSON.stringify(c.args)}`;
      const viaMcp = await client.callTool({ name: `mempalace_${c.kind}`, arguments: c.args });
      expect(viaMcp.isError, label).toBe(true);
      const mcp = viaMcp.structuredContent as { success: boolean; error: string; field: string; rule: string };
      const res = await h.call(ROUTE[c.kind], { body: c.args });
      const rest = (await res.json()) as { code: string; error: string; field: string; rule: string };
      expect(res.status, label).toBe(400);
      expect(rest.code, label).toBe('invalid_argument');
      expect({ field: rest.field, rule: rest.rule }, label).toEqual({ field: c.field, rule: c.rule });
      expect({ field: mcp.field, rule: mcp.rule, message: mcp.error }, label).toEqual({ field: rest.field, rule: rest.rule, message: rest.error });
    }
    expect((await h.runtime.jobs.list(50)).length).toBe(0);
  });

  it('accepts the same valid request on both and builds the same job', async () => {
    // Not a dry run: a dry run takes a lock of its own, and the point is the one lock of the source.
    const args = { source: path.join(root, 'project'), wing: 'parity', limit: 3 };
    const viaMcp = await client.callTool({ name: 'mempalace_mine', arguments: args });
    expect(viaMcp.isError, JSON.stringify(viaMcp.structuredContent)).not.toBe(true);
    const res = await h.call(ROUTE.mine, { body: args });
    // 409 when the first is still running on the same source.
    expect([202, 409]).toContain(res.status);
    const jobs = await h.runtime.jobs.list(10);
    expect(jobs.length).toBe(res.status === 202 ? 2 : 1);
    expect(jobs.every((j) => j.kind === 'mine')).toBe(true);
    expect(new Set(jobs.map((j) => j.lock_key)).size).toBe(1);
    // What the jobs work on, as GET /v1/jobs shows it.
    const listed = (await (await h.call('/v1/jobs')).json()) as { jobs: Record<string, unknown>[] };
    expect(listed.jobs.length).toBe(jobs.length);
    for (const j of listed.jobs) expect(j).toMatchObject({ kind: 'mine', source: fs.realpathSync(args.source), wing: 'parity', mode: 'projects' });
  });
});
