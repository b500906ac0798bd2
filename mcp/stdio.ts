/**
 * The stdio transport: stdout carries only JSON-RPC messages, every diagnostic goes to stderr.
 */
import type { Runtime } from '../cli/runtime.js';
import { LineTransport } from './line-transport.js';
import type { PalaceMcpOptions } from './server.js';
import { PalaceMcp } from './server.js';

export interface StdioServerHandle {
  palace: PalaceMcp;
  /** Resolves when the client closes the connection (stdin ends). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function runStdioServer(runtime: Runtime, opts: PalaceMcpOptions = {}): Promise<StdioServerHandle> {
  const palace = new PalaceMcp(runtime, opts);
  const log = palace.log;
  const server = palace.createServer();
  const transport = new LineTransport(process.stdin, process.stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => { resolveClosed = resolve; });
  server.onclose = () => resolveClosed();
  // Malformed input is answered by the transport and logged here; stdin's end closes the server.
  server.onerror = (e) => log.warn(`mempalace mcp: ${e.message}`);
  await server.connect(transport);
  palace.start();
  palace.watchdogs.startIdleClock();
  log.info(`mempalace mcp: serving ${runtime.stores.palace} over stdio${palace.readOnly ? ' (read-only)' : ''}`);
  void closed.then(() => palace.watchdogs.stop());
  return { palace, closed, close: () => server.close() };
}
