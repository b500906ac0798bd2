/**
 * The spans of one cluster mine reach a real OpenTelemetry Collector as one trace with its parent
 * links intact: the MCP tool call in this process (`mempalace-serve`), the job start, Temporal's
 * StartWorkflow, the workflow and its activities run by a `mempalace worker` child process
 * (`mempalace-worker`), the store calls of those activities (OpenSearch, Redis, Neo4j), and the
 * job-end notification through BullMQ (send and process), with the job id and wing on the job
 * spans. Needs the cluster engines (deploy/local).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime } from '../../app/runtime.js';
import { activeTracing } from '../../app/tracing/sdk.js';
import type { Config } from '../../core/config.js';
import { PalaceMcp } from '../../mcp/server.js';
import type { CallContext } from '../../mcp/types.js';
import type { Runtime } from '../../palace/runtime.js';
import { clusterConfig, dropClusterPalace } from '../helpers/cluster-palace.js';
import type { Collector } from '../helpers/otel-collector.js';
import { descendsFrom, rootsOf, startCollector } from '../helpers/otel-collector.js';
import { quietLogger } from '../helpers/log.js';

const CLI = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));
const WING = 'traced_wing';

let collector: Collector;
let config: Config;
let worker: ChildProcess | undefined;
const workerLog: string[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-tracing-mine-'));

beforeAll(async () => {
  collector = await startCollector();
  // Read by the SDK of this process (started by the runtime) and of the worker child.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collector.endpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = '100';
  config = clusterConfig('trace');
  worker = spawn(process.execPath, ['--import', 'tsx', CLI, 'worker', '--shutdown-grace', '5'], {
    env: { ...process.env, MEMPALACE_PROFILE: 'cluster', MEMPALACE_PALACE_NAME: config.palaceName, MEMPALACE_PALACE: path.join(dir, 'worker-home') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout!.on('data', (c: Buffer) => workerLog.push(c.toString()));
  worker.stderr!.on('data', (c: Buffer) => workerLog.push(c.toString()));
});

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
  await collector?.stop();
  if (config) await dropClusterPalace(config);
  fs.rmSync(dir, { recursive: true, force: true });
});

const call = (): CallContext => ({ caller: undefined, signal: new AbortController().signal, onJobProgress: undefined, clientRoots: async () => undefined });

async function mineOnce(rt: Runtime, source: string): Promise<string> {
  const mcp = new PalaceMcp(rt, { home: path.join(dir, 'home'), log: quietLogger() });
  try {
    const result = await mcp.callTool('mempalace_mine', { source, wing: WING }, call());
    const content = result.structuredContent as { job_id?: string; success?: boolean };
    if (content.job_id === undefined) {
      // Finished within the tool's wait: the job is the newest one of this palace.
      const [newest] = await rt.jobs.list(1);
      return newest!.job_id;
    }
    const end = await rt.jobs.wait(content.job_id, 240_000);
    expect(end.state, workerLog.join('')).toBe('completed');
    return content.job_id;
  } finally {
    await mcp.close();
  }
}

describe('traces of a cluster mine', () => {
  it('arrive at the collector as one trace from the tool call through the workflow and activities to the store calls', async () => {
    const source = path.join(dir, 'project');
    fs.mkdirSync(path.join(source, 'src'), { recursive: true });
    fs.writeFileSync(path.join(source, 'README.md'), '# Traced project\n\nA project mined to see its spans arrive at the collector.\n');
    fs.writeFileSync(path.join(source, 'src', 'main.ts'), 'export function main(): string {\n  return "traced";\n}\n');

    const rt = await openRuntime(config, { role: 'serve', log: quietLogger() });
    const jobId = await mineOnce(rt, source);
    await (await activeTracing())?.flush();

    const toolName = 'tools/call mempalace_mine';
    const spans = await collector.waitFor((all) => {
      const tool = all.find((s) => s.name === toolName);
      if (!tool) return false;
      const trace = all.filter((s) => s.traceId === tool.traceId);
      return trace.some((s) => s.name.startsWith('RunWorkflow:')) && trace.some((s) => s.name === 'mempalace.activity mineBatch')
        && trace.some((s) => s.service === 'mempalace-worker' && s.attributes['db.system.name'] === 'opensearch')
        && trace.some((s) => s.name === 'mempalace.activity finishMine') && trace.some((s) => s.name === 'process job-notifications')
        // Every parent has arrived too (worker and workflow spans are exported on their own schedule).
        && rootsOf(all, tool.traceId).length === 1;
    }, 120_000);
    const tool = spans.find((s) => s.name === toolName)!;
    const trace = spans.filter((s) => s.traceId === tool.traceId);
    expect(tool.service).toBe('mempalace-serve');
    expect(rootsOf(spans, tool.traceId)).toEqual([tool]);

    const start = trace.find((s) => s.name === 'mempalace.job.start mine')!;
    expect(start.attributes).toMatchObject({ 'mempalace.job.id': jobId, 'mempalace.wing': WING, 'mempalace.job.kind': 'mine' });
    const workflow = trace.find((s) => s.name.startsWith('RunWorkflow:'))!;
    expect(descendsFrom(spans, workflow, start)).toBe(true);
    const activities = trace.filter((s) => s.name.startsWith('mempalace.activity '));
    expect(activities.map((s) => s.name)).toEqual(expect.arrayContaining(['mempalace.activity scanSource', 'mempalace.activity mineBatch']));
    for (const a of activities) {
      expect(a.service).toBe('mempalace-worker');
      expect(a.attributes).toMatchObject({ 'mempalace.job.id': jobId, 'mempalace.wing': WING });
      expect(descendsFrom(spans, a, workflow)).toBe(true);
    }
    const runActivity = trace.filter((s) => s.name.startsWith('RunActivity:'));
    expect(runActivity.length).toBeGreaterThan(0);

    const storeCalls = trace.filter((s) => s.service === 'mempalace-worker' && typeof s.attributes['db.system.name'] === 'string');
    expect([...new Set(storeCalls.map((s) => s.attributes['db.system.name']))]).toEqual(expect.arrayContaining(['opensearch', 'redis']));
    for (const s of storeCalls) expect(activities.some((a) => descendsFrom(spans, s, a)) || runActivity.some((a) => descendsFrom(spans, s, a))).toBe(true);

    // The job's end goes out on BullMQ: published by the last activity, consumed by the worker's short-job consumer, one trace.
    const send = trace.find((s) => s.name === 'send job-notifications')!;
    // A job-end notification names the job, not its wing.
    expect(send.attributes).toMatchObject({ 'messaging.system': 'bullmq', 'messaging.operation.type': 'send', 'mempalace.job.id': jobId });
    expect(typeof send.attributes['messaging.message.id']).toBe('string');
    expect(runActivity.some((a) => descendsFrom(spans, send, a))).toBe(true);
    const processed = trace.find((s) => s.name === 'process job-notifications')!;
    expect(processed.parentSpanId).toBe(send.spanId);
    expect(processed.attributes).toMatchObject({ 'messaging.operation.type': 'process', 'messaging.message.id': send.attributes['messaging.message.id'],
      'mempalace.job.id': jobId });
    await rt.close();
  });
});
