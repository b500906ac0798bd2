/**
 * MCP server benchmarks on the embedded profile with the real MiniLM embedder:
 * 1. tool-call overhead: `search` and `add_drawer` called directly on palace/, through the
 *    dispatcher in-process (schema check, gates, wrapping), and over Streamable HTTP with the SDK
 *    client — p50/p95 of each and the overhead over the direct call;
 * 2. 50 concurrent HTTP clients mixing search, add_drawer and event_append for 60 s: errors,
 *    throughput and latency percentiles per tool.
 * Run: `npx tsx bench/mcp.bench.ts [--write] [--seconds N]`; `--write` replaces the
 * "MCP server" section of bench/README.md with the table printed.
 */
import fs from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import express from 'express';
import { openRuntime } from '../app/runtime.js';
import { loadConfig } from '../app/config.js';
import { addDrawer } from '../palace/drawers/drawers.js';
import { search } from '../palace/search/search.js';
import { bearerTokenResolver, mcpRouter } from '../mcp/http.js';
import { PalaceMcp } from '../mcp/server.js';
import { writeReadmeSection } from './lib/report.js';
import { machine, percentile, seeded, timeMs } from './lib/stats.js';
import { createLogger } from '../core/log.js';

const secondsArg = process.argv.indexOf('--seconds');
const LOAD_SECONDS = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 60;
const CLIENTS = 50;
const ROUNDS = 200;
const QUERIES = ['how are card payments retried', 'avatar cache on mobile', 'queue acknowledgement after write', 'tablet layout of settings',
  'storm near the harbour'];
const TOPICS = ['billing', 'mobile', 'ingestion', 'frontend', 'harbour', 'search', 'auth', 'deploy'];

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${fmt(Math.abs(ms))}`;

function sentence(rand: () => number, i: number): string {
  const t = TOPICS[Math.floor(rand() * TOPICS.length)]!;
  return `Note ${i} about ${t}: the ${t} team changed ${Math.floor(rand() * 100)} settings after review ${Math.floor(rand() * 1e6)}.`;
}

async function main(): Promise<void> {
  const palaceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-mcp-bench-'));
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: palaceDir });
  const runtime = await openRuntime(config);
  const mcp = new PalaceMcp(runtime, { home: fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-mcp-bench-home-')),
    log: createLogger({ level: 'silent', format: 'json' }) });
  mcp.start();
  const tokens = new Map([['bench', { identity: 'bench', scopes: ['read', 'write', 'admin'] }]]);
  const app = express();
  app.use(mcpRouter(mcp, { resolveCaller: bearerTokenResolver(tokens) }));
  const server = await new Promise<HttpServer>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  // Keep idle sockets open longer than a client's pause between calls, so a reused keep-alive
  // socket is never closed by the server at the moment the client sends on it.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
  const connect = async () => {
    const client = new Client({ name: 'mcp-bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: 'Bearer bench' } } }));
    return client;
  };

  const rand = seeded(7);
  for (let i = 0; i < 300; i++) await addDrawer(runtime.drawerContext, { wing: TOPICS[i % TOPICS.length]!, room: `room-${i % 5}`, content: sentence(rand, i) });
  const cctx = { caller: undefined, signal: new AbortController().signal, onJobProgress: undefined, clientRoots: async () => undefined };
  const client = await connect();

  // 1. Overhead, interleaved so drift affects all three paths alike.
  const lat = { searchDirect: [] as number[], searchDispatch: [] as number[], searchHttp: [] as number[], addDirect: [] as number[],
    addDispatch: [] as number[], addHttp: [] as number[] };
  let n = 10_000;
  for (let i = 0; i < ROUNDS; i++) {
    const q = QUERIES[i % QUERIES.length]!;
    lat.searchDirect.push(await timeMs(() => search(runtime.drawerContext, { query: q }, { sanitize: true, defaultMaxDistance: 1.5 })));
    lat.searchDispatch.push(await timeMs(() => mcp.callTool('mempalace_search', { query: q }, cctx)));
    lat.searchHttp.push(await timeMs(() => client.callTool({ name: 'mempalace_search', arguments: { query: q } })));
    lat.addDirect.push(await timeMs(() => addDrawer(runtime.drawerContext, { wing: 'bench', room: 'overhead', content: sentence(rand, n++) })));
    lat.addDispatch.push(await timeMs(() => mcp.callTool('mempalace_add_drawer', { wing: 'bench', room: 'overhead', content: sentence(rand, n++) }, cctx)));
    lat.addHttp.push(
      await timeMs(() => client.callTool({ name: 'mempalace_add_drawer', arguments: { wing: 'bench', room: 'overhead', content: sentence(rand, n++) } })),
    );
  }
  const p = (xs: number[], q: number) => percentile(xs, q);
  const row = (label: string, direct: number[], via: number[]) =>
    `| ${label} | ${fmt(p(via, 0.5))} / ${fmt(p(via, 0.95))} | ${signed(p(via, 0.5) - p(direct, 0.5))} / ${signed(p(via, 0.95) - p(direct, 0.95))} |`;

  // 2. Load: 50 clients, mixed tools, for LOAD_SECONDS.
  const clients = await Promise.all(Array.from({ length: CLIENTS }, connect));
  const load: Record<string, number[]> = { mempalace_search: [], mempalace_add_drawer: [], mempalace_event_append: [] };
  const errors: string[] = [];
  const deadline = performance.now() + LOAD_SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(clients.map(async (c, ci) => {
    const r = seeded(100 + ci);
    let k = 0;
    while (performance.now() < deadline) {
      const pick = r();
      const [name, args]: [string, Record<string, unknown>] = pick < 0.4
        ? ['mempalace_search', { query: QUERIES[Math.floor(r() * QUERIES.length)]!, limit: 5 }]
        : pick < 0.7
        ? ['mempalace_add_drawer', { wing: 'load', room: `client-${ci}`, content: `${sentence(r, k)} (client ${ci}, call ${k})` }]
        : ['mempalace_event_append', { type: 'status.note', stream: 'project/bench', room: 'status', from_agent: `agent-${ci}`, body: `tick ${k}` }];
      k++;
      const start = performance.now();
      try {
        const res = await c.callTool({ name, arguments: args });
        const sc = res.structuredContent as Record<string, unknown> | undefined;
        if (res.isError || !sc || 'error' in sc) errors.push(`${name}: ${JSON.stringify(sc ?? res.content).slice(0, 200)}`);
      } catch (e) {
        errors.push(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      }
      load[name]!.push(performance.now() - start);
    }
  }));
  const elapsed = (performance.now() - t0) / 1000;
  const total = Object.values(load).reduce((a, xs) => a + xs.length, 0);
  const loadRow = (name: string) => {
    const xs = load[name]!;
    return `| ${name} | ${xs.length} | ${fmt(p(xs, 0.5))} | ${fmt(p(xs, 0.95))} | ${fmt(p(xs, 0.99))} | ${fmt(Math.max(...xs))} |`;
  };

  const table = [
    `Measured ${machine()}; embedded profile (SQLite), MiniLM on CPU, ${ROUNDS} interleaved rounds over a palace of 300+ drawers; HTTP is stateless Streamable HTTP on 127.0.0.1 with the SDK client.`,
    '',
    '| call | direct palace/ p50 / p95 |',
    '|---|---|',
    `| search | ${fmt(p(lat.searchDirect, 0.5))} / ${fmt(p(lat.searchDirect, 0.95))} |`,
    `| add_drawer | ${fmt(p(lat.addDirect, 0.5))} / ${fmt(p(lat.addDirect, 0.95))} |`,
    '',
    '| path | p50 / p95 | overhead over direct, p50 / p95 |',
    '|---|---|---|',
    row('search, dispatcher in-process', lat.searchDirect, lat.searchDispatch),
    row('search, MCP over HTTP', lat.searchDirect, lat.searchHttp),
    row('add_drawer, dispatcher in-process', lat.addDirect, lat.addDispatch),
    row('add_drawer, MCP over HTTP', lat.addDirect, lat.addHttp),
    '',
    `${CLIENTS} concurrent HTTP clients for ${LOAD_SECONDS} s (40 % search, 30 % add_drawer, 30 % event_append): ${total} calls, ${
      (total / elapsed).toFixed(1)
    } calls/s, **${errors.length} errors**.`,
    '',
    '| tool | calls | p50 | p95 | p99 | max |',
    '|---|---|---|---|---|---|',
    loadRow('mempalace_search'),
    loadRow('mempalace_add_drawer'),
    loadRow('mempalace_event_append'),
  ].join('\n');
  process.stdout.write(`${table}\n`);
  if (errors.length > 0) process.stdout.write(`first errors:\n${errors.slice(0, 5).join('\n')}\n`);

  if (process.argv.includes('--write')) writeReadmeSection('## MCP server', 'npx tsx bench/mcp.bench.ts --write', table);

  await Promise.allSettled([client, ...clients].map((c) => c.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await mcp.close();
  fs.rmSync(palaceDir, { recursive: true, force: true });
}

await main();
