/**
 * How many HTTP requests one MCP session makes per second, to size the default per-token rate
 * limit (MEMPALACE_API_RATE_PER_S / _BURST, issue 15): a sequential SDK client over Streamable HTTP
 * calling cheap tools back to back as fast as the server answers (far above any agent driven by a
 * model), through the full app with the limit lifted. Prints, per run and as medians, the mean
 * requests/s, the busiest 1 s window and the busiest 100 ms window scaled to a second.
 * Run: `npx tsx bench/mcp-session-rate.bench.ts [--seconds N] [--runs N]`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import express from 'express';
import { createApp } from '../api/app.js';
import { Authenticator } from '../api/auth.js';
import { listen } from '../api/server.js';
import { openRuntime } from '../app/runtime.js';
import { loadConfig } from '../app/config.js';
import { percentile } from './lib/stats.js';
import { createLogger } from '../core/log.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const SECONDS = arg('--seconds', 20);
const RUNS = arg('--runs', 3);
const TOOLS = ['mempalace_status', 'mempalace_list_wings', 'mempalace_kg_stats', 'mempalace_event_list', 'mempalace_list_tunnels'];

function busiest(stamps: number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < stamps.length; hi++) {
    while (stamps[hi]! - stamps[lo]! >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best * (1000 / windowMs);
}

const palaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-rate-'));
const runtime = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: palaceDir }));
const api = createApp(runtime, { auth: Authenticator.fromTokens([['tok', { identity: 'bench', scopes: ['read', 'write'] }]]),
  rateLimit: { ratePerSecond: 1e9, burst: 1e9 }, log: createLogger({ level: 'silent', format: 'json' }) });
api.mcp.start();
let stamps: number[] = [];
const outer = express();
outer.use((req, _res, next) => {
  if (req.path === '/mcp') stamps.push(performance.now());
  next();
});
outer.use(api.app);
const server = await listen(outer, '127.0.0.1', 0);

const rows: { mean: number; peak1s: number; peak100ms: number }[] = [];
for (let run = 0; run < RUNS; run++) {
  stamps = [];
  const client = new Client({ name: 'rate-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: 'Bearer tok' } } }));
  const end = performance.now() + SECONDS * 1000;
  for (let i = 0; performance.now() < end; i++) await client.callTool({ name: TOOLS[i % TOOLS.length]!, arguments: {} });
  await client.close();
  const span = (stamps.at(-1)! - stamps[0]!) / 1000;
  const row = { mean: stamps.length / span, peak1s: busiest(stamps, 1000), peak100ms: busiest(stamps, 100) };
  rows.push(row);
  console.log(
    `run ${run + 1}: ${stamps.length} requests in ${span.toFixed(1)} s — mean ${row.mean.toFixed(0)}/s, busiest 1 s ${
      row.peak1s.toFixed(0)
    }, busiest 100 ms ×10 ${row.peak100ms.toFixed(0)}/s`,
  );
}
const med = (k: keyof (typeof rows)[number]) => percentile(rows.map((r) => r[k]), 0.5).toFixed(0);
console.log(
  `median of ${RUNS} runs (${os.cpus().length} cores): mean ${med('mean')}/s, busiest 1 s ${med('peak1s')}, busiest 100 ms ×10 ${
    med('peak100ms')
  }/s; default limit ${loadConfig({}).api.ratePerSecond}/s, burst ${loadConfig({}).api.rateBurst}`,
);
await server.close();
await runtime.close();
