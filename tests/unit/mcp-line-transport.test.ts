/**
 * The capped stdio line reader: messages split across chunks or packed into one, CRLF endings,
 * an oversized line answered with -32600 and skipped while the reader keeps going, and the
 * envelope replies for unparseable lines.
 */
import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { screen } from '../../mcp/envelope.js';
import { LineTransport } from '../../mcp/line-transport.js';

async function harness(maxLineBytes: number) {
  const input = new PassThrough();
  const output = new PassThrough();
  const received: JSONRPCMessage[] = [];
  const replies: unknown[] = [];
  let pending = '';
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    pending += chunk;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      replies.push(JSON.parse(pending.slice(0, nl)));
      pending = pending.slice(nl + 1);
    }
  });
  const transport = new LineTransport(input, output, maxLineBytes);
  transport.onmessage = (m) => received.push(m);
  await transport.start();
  const settle = () => new Promise((r) => setImmediate(r));
  return { input, received, replies, transport, settle };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('LineTransport', () => {
  it('reassembles split lines, splits packed ones and accepts CRLF', async () => {
    const h = await harness(1024);
    const one = ping(1);
    h.input.write(one.slice(0, 5));
    h.input.write(`${one.slice(5)}\n${ping(2)}\r\n${ping(3)}`);
    h.input.write('\n\n');
    await h.settle();
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(h.replies).toEqual([]);
  });

  it('answers an oversized line with -32600, skips it whole and keeps reading', async () => {
    const h = await harness(64);
    h.input.write(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"${'x'.repeat(50)}`);
    h.input.write(`${'y'.repeat(100)}"}}\n${ping(10)}\n`);
    await h.settle();
    expect(h.replies).toHaveLength(1);
    expect(h.replies[0]).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([10]);
  });

  it('answers unparseable text with -32700 and id null', async () => {
    const h = await harness(1024);
    h.input.write('{oops\n');
    await h.settle();
    expect(h.replies).toEqual([{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }]);
  });

  it('closes when stdin ends, delivering a last unterminated line', async () => {
    const h = await harness(1024);
    let closed = false;
    h.transport.onclose = () => {
      closed = true;
    };
    h.input.end(ping(4));
    await new Promise((r) => setTimeout(r, 10));
    expect(h.received.map((m) => (m as { id: number }).id)).toEqual([4]);
    expect(closed).toBe(true);
  });
});

describe('envelope screen', () => {
  it('passes a well-formed response to one of our requests and drops a malformed one', () => {
    expect(screen({ jsonrpc: '2.0', id: 3, result: { roots: [] } }).kind).toBe('message');
    expect(screen({ jsonrpc: '2.0', id: 3 }).kind).toBe('drop');
  });

  it('names the field of a schema issue', () => {
    const missing = screen({ jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { version: '1' } } });
    expect(missing).toMatchObject({ kind: 'reply',
      reply: { id: 1, error: { code: -32602, message: "Invalid params: 'clientInfo.name' is required (a string)" } } });
    const wrong = screen({ jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 5 } });
    expect(wrong).toMatchObject({ kind: 'reply', reply: { id: 2, error: { code: -32602, message: "Invalid params: 'uri' must be a string" } } });
  });
});
