/**
 * Listening: the HTTP server of `mempalace serve`, with timeouts that let a five-minute
 * `event_wait` and endless SSE streams live (logstream.md §5.4: request and idle timeouts must
 * exceed 310 s), and a shutdown that closes open streams.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

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
        close: () => new Promise<void>((done) => {
          server.close(() => done());
          server.closeAllConnections();
        }),
      });
    });
  });
}
