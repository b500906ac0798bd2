/**
 * The stdio transport: stdout carries only JSON-RPC messages, every diagnostic goes to stderr.
 */
import type { Runtime } from '../palace/runtime.js';
import { LineTransport } from './line-transport.js';
import type { PalaceMcpOptions } from './server.js';
import { PalaceMcp } from './server.js';

export interface StdioServerHandle {
  mcp: PalaceMcp;
  /** Resolves when the client closes the connection (stdin ends). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function runStdioServer(runtime: Runtime, opts: PalaceMcpOptions = {}): Promise<StdioServerHandle> {
  const mcp = new PalaceMcp(runtime, opts);
  const log = mcp.log;
  const server = mcp.createServer();
  const transport = new LineTransport(process.stdin, process.stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  server.onclose = () => resolveClosed();
  // Malformed input is answered by the transport and logged here; stdin's end closes the server.
  server.onerror = (e) => log.warn(`mempalace mcp: ${e.message}`);
  await server.connect(transport);
  mcp.start();
  mcp.watchdogs.startIdleClock();
  log.info(`mempalace mcp: serving ${runtime.stores.palace} over stdio${mcp.readOnly ? ' (read-only)' : ''}`);
  void closed.then(() => mcp.watchdogs.stop());
  return { mcp, closed, close: () => server.close() };
}
