/**
 * Prometheus metrics of one serving process (`GET /metrics`): HTTP requests and latencies, MCP
 * tool calls and latencies, job progress of running jobs (read from the job engine at scrape
 * time), open SSE streams, store errors, and BullMQ queue depths where the profile has queues.
 *
 * `observeToolCall` is the hook for the MCP layer. Until it calls it, the `/mcp` middleware
 * counts tool calls from the JSON-RPC request (`tools/call` and its tool name), timed to the end
 * of the HTTP response, with the HTTP outcome. Searches, tool calls and requests also go into
 * `history`, the last hour minute by minute that the dashboard charts.
 */
import type { Request, RequestHandler } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobProgress } from '../jobs/job.js';
import { MetricsHistory } from './metrics-history.js';

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const SEARCH_TOOL = 'mempalace_search';
const SEARCH_ROUTE = '/v1/search';

export interface MetricsSources {
  /** Recent jobs, newest first. */
  jobs(): Promise<JobProgress[]>;
  /** Open SSE streams. */
  sseClients(): number;
  /** Known tool names; anything else is counted as `unknown` to bound label values. */
  toolNames: ReadonlySet<string>;
  /** Jobs per queue and state; absent where short jobs run inline (embedded profile). */
  queueDepths?: () => Promise<Record<string, Record<string, number>>>;
  /** Dead letters of the short jobs (notifications, refreshes), on every profile. */
  deadLetters?: () => Promise<number>;
}

export class ApiMetrics {
  readonly registry = new Registry();
  readonly history = new MetricsHistory();
  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpSeconds: Histogram<'method' | 'route'>;
  private readonly toolCalls: Counter<'tool' | 'outcome'>;
  private readonly toolSeconds: Histogram<'tool'>;
  private readonly storeErrors: Counter<'store'>;
  private snapshot: { atMs: number; jobs: Promise<JobProgress[]> } | undefined;

  constructor(private readonly sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'mempalace_process_' });
    this.httpRequests = new Counter({ name: 'mempalace_http_requests_total', help: 'HTTP requests by route and status.',
      labelNames: ['method', 'route', 'status'], registers });
    this.httpSeconds = new Histogram({ name: 'mempalace_http_request_duration_seconds', help: 'HTTP request latency by route (SSE streams excluded).',
      labelNames: ['method', 'route'], buckets: LATENCY_BUCKETS, registers });
    this.toolCalls = new Counter({ name: 'mempalace_mcp_tool_calls_total', help: 'MCP tool calls by tool and outcome.', labelNames: ['tool', 'outcome'],
      registers });
    this.toolSeconds = new Histogram({ name: 'mempalace_mcp_tool_call_duration_seconds', help: 'MCP tool call latency by tool.', labelNames: ['tool'],
      buckets: LATENCY_BUCKETS, registers });
    this.storeErrors = new Counter({ name: 'mempalace_store_errors_total', help: 'Store failures seen by the API, by store.', labelNames: ['store'],
      registers });
    new Gauge({ name: 'mempalace_sse_clients', help: 'Open Server-Sent Events streams.', registers, collect() {
      this.set(sources.sseClients());
    } });
    const queueDepths = sources.queueDepths;
    if (queueDepths) {
      new Gauge({
        name: 'mempalace_queue_jobs',
        help: 'BullMQ jobs by queue and state (failed = dead letters).',
        labelNames: ['queue', 'state'],
        registers,
        async collect() {
          this.reset();
          for (const [queue, states] of Object.entries(await queueDepths())) for (const [state, n] of Object.entries(states)) this.set({ queue, state }, n);
        },
      });
    }

    const deadLetters = sources.deadLetters;
    if (deadLetters)
      new Gauge({ name: 'mempalace_dead_letters', help: 'Short jobs (job-end notifications, source refreshes) that exhausted their attempts, until retried.',
        registers, async collect() {
        this.set(await deadLetters());
      } });

    const jobGauge = (name: string, help: string, value: (p: JobProgress) => number) => {
      const snapshot = () => this.jobSnapshot();
      new Gauge({
        name,
        help,
        labelNames: ['job_id', 'kind'],
        registers,
        async collect() {
          this.reset();
          for (const p of await snapshot()) if (p.state === 'running') this.set({ job_id: p.job_id, kind: p.kind }, value(p));
        },
      });
    };
    jobGauge('mempalace_job_files_total', "Files in the running job's manifest.", (p) => p.files_total);
    jobGauge('mempalace_job_files_seen', 'Files the running job has processed.', (p) => p.files_seen);
    jobGauge('mempalace_job_drawers_written', 'Drawers the running job has written.', (p) => p.drawers_written);
    jobGauge('mempalace_job_errors', 'Per-file errors of the running job.', (p) => p.errors);
    jobGauge('mempalace_job_rate_files_per_second', 'Files per second of the running job.', (p) => p.rate);
    const snapshot = () => this.jobSnapshot();
    new Gauge({
      name: 'mempalace_jobs',
      help: 'Recent jobs by kind and state.',
      labelNames: ['kind', 'state'],
      registers,
      async collect() {
        this.reset();
        const counts = new Map<string, { kind: string; state: string; n: number }>();
        for (const p of await snapshot()) {
          const key = `${p.kind}\u0000${p.state}`;
          const c = counts.get(key) ?? { kind: p.kind, state: p.state, n: 0 };
          c.n += 1;
          counts.set(key, c);
        }
        for (const c of counts.values()) this.set({ kind: c.kind, state: c.state }, c.n);
      },
    });
  }

  /** One job listing per scrape, shared by the job gauges. */
  private jobSnapshot(): Promise<JobProgress[]> {
    const now = Date.now();
    if (!this.snapshot || now - this.snapshot.atMs > 500) {
      this.snapshot = { atMs: now, jobs: this.sources.jobs().catch(() => {
        this.storeError('jobs');
        return [];
      }) };
    }
    return this.snapshot.jobs;
  }

  /** The hook for the MCP layer: one finished tool call. */
  observeToolCall(tool: string, outcome: 'ok' | 'error', seconds: number): void {
    const name = this.sources.toolNames.has(tool) ? tool : 'unknown';
    this.toolCalls.inc({ tool: name, outcome });
    this.toolSeconds.observe({ tool: name }, seconds);
    this.history.record('tools', seconds, outcome === 'error');
    if (name === SEARCH_TOOL) this.history.record('search', seconds, outcome === 'error');
  }

  storeError(store: string): void {
    this.storeErrors.inc({ store });
  }

  /** Counts every request by its route pattern (never the raw path, to bound label values). */
  httpMiddleware(): RequestHandler {
    return (req, res, next) => {
      const start = process.hrtime.bigint();
      res.on('finish', () => {
        const route = routeLabel(req);
        const seconds = Number(process.hrtime.bigint() - start) / 1e9;
        this.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
        if (String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream')) return;
        this.httpSeconds.observe({ method: req.method, route }, seconds);
        const failed = res.statusCode >= 500;
        this.history.record('http', seconds, failed);
        if (route === SEARCH_ROUTE) this.history.record('search', seconds, failed);
      });
      next();
    };
  }

  /** Tool calls on `/mcp`, read from the parsed JSON-RPC body (single or batch). */
  mcpMiddleware(): RequestHandler {
    return (req, res, next) => {
      const messages = Array.isArray(req.body) ? (req.body as unknown[]) : [req.body];
      const tools = messages
        .filter((m): m is { method: string; params?: { name?: unknown } } =>
          typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call'
        )
        .map((m) => (typeof m.params?.name === 'string' ? m.params.name : 'unknown'));
      if (tools.length > 0) {
        const start = process.hrtime.bigint();
        res.on('finish', () => {
          const seconds = Number(process.hrtime.bigint() - start) / 1e9;
          for (const tool of tools) this.observeToolCall(tool, res.statusCode < 400 ? 'ok' : 'error', seconds);
        });
      }
      next();
    };
  }
}

function routeLabel(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof pattern === 'string') return pattern;
  if (req.path === '/mcp') return '/mcp';
  if (req.path.startsWith('/dashboard')) return '/dashboard';
  return 'unmatched';
}
