/**
 * Listening: the HTTP server of `mempalace serve`, with timeouts that let a five-minute
 * `event_wait` and endless SSE streams live (docs/logstream.md §5.4: request and idle timeouts must
 * exceed 310 s), and a shutdown that closes open streams.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import type { Runtime } from '../palace/runtime.js';
import { PalaceMcp } from '../mcp/server.js';
import type { ApiOptions } from './app.js';
import { createApp } from './app.js';
import { Authenticator, assertBindAllowed } from './auth.js';
import { MeshReplicator } from '../palace/logstream/replicator.js';
import { syncTransport } from '../palace/logstream/transport.js';
import { oauthFromConfig } from './oauth.js';
import type { Logger } from '../core/log.js';

const LONG_REQUEST_MS = 320_000;

export interface Listening {
  server: Server;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

export function listen(app: Express, host: string, port: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      server.requestTimeout = LONG_REQUEST_MS;
      server.headersTimeout = 60_000;
      server.keepAliveTimeout = LONG_REQUEST_MS;
      server.timeout = 0;
      const addr = server.address() as AddressInfo;
      const shownHost = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
      resolve({
        server,
        url: `http://${shownHost}:${addr.port}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}

export interface ServeOptions extends ApiOptions {
  host: string;
  port: number;
  readOnly?: boolean;
  /** Reopen the stores for mempalace_reconnect (the composition root knows how). */
  reopen?: () => Promise<Runtime>;
}

/** Build the app over the runtime and listen; refuses an unauthenticated non-loopback bind. */
export async function startApiServer(runtime: Runtime, opts: ServeOptions): Promise<Listening & { mcp: PalaceMcp }> {
  const log = opts.log ?? runtime.log;
  const oauth = opts.oauth ?? oauthFromConfig(runtime.config, log);
  const auth = opts.auth ?? Authenticator.fromConfig(runtime.config, oauth);
  assertBindAllowed(opts.host, auth, runtime.config);
  const mcp = opts.mcp ?? new PalaceMcp(runtime, {
    ...(opts.readOnly ? { readOnly: true } : {}),
    ...(runtime.stores.integrityCheck ? { integrityProbe: runtime.stores.integrityCheck } : {}),
    ...(opts.reopen ? { reopen: opts.reopen } : {}),
    log,
  });
  const replicator = meshReplicator(mcp, log);
  mcp.start();
  const { app } = createApp(runtime, { ...opts, auth, ...(oauth ? { oauth } : {}), mcp, log });
  const listening = await listen(app, opts.host, opts.port);
  log.info(
    `mempalace serve: ${listening.url} (MCP at /mcp, REST at /v1, dashboard at /dashboard)${
      auth.open ? ' — no tokens configured: every request acts as the local admin' : ''
    }`,
  );
  replicator.start();
  return {
    ...listening,
    mcp,
    async close() {
      await replicator.stop();
      await listening.close();
    },
  };
}

/** The logstream sync loop of this serving process (docs/logstream.md §8.6), over the current stores. */
function meshReplicator(mcp: PalaceMcp, log: Logger): MeshReplicator {
  const config = mcp.runtime.config;
  const stores = () => mcp.runtime.stores;
  return new MeshReplicator({
    logstream: () => stores().logstream,
    locks: () => stores().locks,
    peers: () => stores().syncPeers(),
    originKeys: () => stores().originKeys(),
    transport: syncTransport(config.sync.transport, config.sync.httpTimeoutS * 1000),
    intervalMs: config.sync.intervalS * 1000,
    mesh: {
      replicaName: config.replicaName,
      syncIntervalS: config.sync.intervalS,
      nodeFacts: async () => ({ drawerStore: true, drawers: await stores().drawers.count(),
        accelerator: { provider: 'CPU', embedder: mcp.runtime.embedder.model } }),
    },
    log,
  });
}
