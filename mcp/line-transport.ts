/**
 * The stdio transport: one JSON-RPC message per line on stdin/stdout, read with a capped line
 * reader. The SDK's own stdio transport stops reading for good when a line outgrows its buffer
 * and drops malformed lines silently; this one answers every malformed request through the
 * shared envelope check (mcp/envelope.ts), skips an oversized line with an error reply, and keeps
 * serving.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { MAX_MESSAGE_BYTES, errorReply, parseErrorReply, screen } from './envelope.js';

const NEWLINE = 0x0a;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of the current line were dropped because it outgrew the cap. */
  private discarding = false;
  private closed = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly maxLineBytes = MAX_MESSAGE_BYTES,
  ) {}

  private readonly onData = (chunk: Buffer | string) => {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    for (;;) {
      const nl = buf.indexOf(NEWLINE);
      if (nl < 0) {
        this.append(buf);
        return;
      }
      this.append(buf.subarray(0, nl));
      this.endLine();
      buf = buf.subarray(nl + 1);
    }
  };

  private readonly onEnd = () => {
    if (this.size > 0 && !this.discarding) this.endLine();
    void this.close();
  };

  private readonly onStreamError = (e: Error) => this.onerror?.(e);

  private append(piece: Buffer): void {
    if (this.discarding || piece.length === 0) return;
    if (this.size + piece.length > this.maxLineBytes) {
      this.parts = [];
      this.size = 0;
      this.discarding = true;
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private endLine(): void {
    if (this.discarding) {
      this.discarding = false;
      this.onerror?.(new Error(`skipped a message over ${this.maxLineBytes} bytes`));
      void this.send(errorReply(null, ErrorCode.InvalidRequest, `Invalid Request: message exceeds the ${this.maxLineBytes}-byte limit; it was skipped`));
      return;
    }
    const line = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    if (line.trim() === '') return;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      this.onerror?.(new Error(`unparseable line: ${e instanceof Error ? e.message : String(e)}`));
      void this.send(parseErrorReply());
      return;
    }
    const screened = screen(raw);
    if (screened.kind === 'message') this.onmessage?.(screened.message);
    else if (screened.kind === 'reply') void this.send(screened.reply);
    else this.onerror?.(new Error(`dropped a message: ${screened.reason}`));
  }

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onStreamError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      if (this.output.write(`${JSON.stringify(message)}\n`)) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onStreamError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.parts = [];
    this.onclose?.();
  }
}
