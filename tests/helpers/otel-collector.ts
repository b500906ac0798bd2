/**
 * A real OpenTelemetry Collector for the tracing tests: built from its Go modules by
 * deploy/local/otelcol/build.sh (cached in the stack's engines folder), started on a free port
 * with an OTLP/HTTP receiver, and exporting with its otlphttp exporter as JSON to an HTTP sink
 * this helper runs, so the test reads the spans exactly as the collector forwarded them.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './processes.js';

const BUILD_SCRIPT = fileURLToPath(new URL('../../deploy/local/otelcol/build.sh', import.meta.url));

/** One span as the collector exported it, attributes flattened to plain values. */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  service: string;
  attributes: Record<string, unknown>;
}

export interface Collector {
  /** The OTLP/HTTP endpoint to put in OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans(): CollectedSpan[];
  /** Resolves with the spans once `done` holds for them; fails after `timeoutMs` with what arrived. */
  waitFor(done: (spans: CollectedSpan[]) => boolean, timeoutMs?: number): Promise<CollectedSpan[]>;
  stop(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: OtlpKeyValue[] }[] }[];
  }[];
}

function plain(v: OtlpValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  return v.boolValue;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

function spansOf(body: OtlpExport): CollectedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs) => {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId ?? '',
        name: s.name,
        kind: s.kind ?? 0,
        service,
        attributes: attributesOf(s.attributes),
      }))
    );
  });
}

/** Builds the collector if its inputs changed (first run: minutes), then starts it with a sink. */
export async function startCollector(): Promise<Collector> {
  const binary = execFileSync('bash', [BUILD_SCRIPT], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const received: CollectedSpan[] = [];
  const sink = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push(...spansOf(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as OtlpExport));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
  const sinkPort = (sink.address() as net.AddressInfo).port;
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-otelcol-'));
  const configFile = path.join(dir, 'config.yaml');
  fs.writeFileSync(configFile, [
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: 127.0.0.1:${port}`,
    'exporters:',
    '  otlphttp:',
    `    endpoint: http://127.0.0.1:${sinkPort}`,
    '    encoding: json',
    '    compression: none',
    'service:',
    '  telemetry:',
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    traces:',
    '      receivers: [otlp]',
    '      exporters: [otlphttp]',
    '',
  ].join('\n'));
  const log: string[] = [];
  const child: ChildProcess = spawn(binary, ['--config', `file:${configFile}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (c: Buffer) => log.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => log.push(c.toString()));
  const deadline = Date.now() + 30_000;
  while (!(await new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  }))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the collector did not start:\n${log.join('')}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    async waitFor(done, timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (!done(received)) {
        if (Date.now() > until) {
          throw new Error(`spans did not arrive; got: ${received.map((s) => `${s.service} ${s.name}`).join(', ')}\ncollector log:\n${log.join('')}`);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      return [...received];
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await new Promise<void>((resolve) => sink.close(() => resolve()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The spans of `traceId` form one tree: every parent is in the trace, and exactly one span is the root. */
export function rootsOf(spans: CollectedSpan[], traceId: string): CollectedSpan[] {
  const ids = new Set(spans.filter((s) => s.traceId === traceId).map((s) => s.spanId));
  return spans.filter((s) => s.traceId === traceId && (s.parentSpanId === '' || !ids.has(s.parentSpanId)));
}

/** Whether `ancestor` is on the parent chain of `span`. */
export function descendsFrom(spans: CollectedSpan[], span: CollectedSpan, ancestor: CollectedSpan): boolean {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  for (let p = byId.get(span.parentSpanId); p; p = byId.get(p.parentSpanId)) if (p.spanId === ancestor.spanId) return true;
  return false;
}
