/**
 * One Server-Sent Events response: headers of docs/logstream.md §7.2, frames, a `: ping` comment
 * after 15 s without a frame, and an AbortSignal that fires when the client goes away.
 */
import type { Request, Response } from 'express';
import { asPalaceError } from '../core/errors.js';

export const PING_AFTER_MS = 15_000;

export class SseStream {
  private readonly controller = new AbortController();
  private lastWriteMs = Date.now();
  private readonly pinger: NodeJS.Timeout;

  constructor(req: Request, private readonly res: Response, onClose: () => void) {
    res.status(200).set({
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      'X-Accel-Buffering': 'no',
      Connection: 'keep-alive',
    });
    res.flushHeaders();
    this.pinger = setInterval(() => {
      if (Date.now() - this.lastWriteMs >= PING_AFTER_MS) this.raw(': ping\n\n');
    }, 1000);
    this.pinger.unref();
    const close = () => {
      if (this.controller.signal.aborted) return;
      clearInterval(this.pinger);
      this.controller.abort();
      onClose();
    };
    req.on('close', close);
    res.on('close', close);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  /** One frame; `data` is written as one line of JSON. */
  send(event: string, data: unknown, id?: string | number): void {
    const lines = [...(id === undefined ? [] : [`id: ${id}`]), `event: ${event}`, `data: ${JSON.stringify(data)}`];
    this.raw(`${lines.join('\n')}\n\n`);
  }

  /** The `error` frame that ends a failed stream: the failure's structured JSON shape. */
  sendError(e: unknown): void {
    this.send('error', asPalaceError(e).toJSON());
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  private raw(text: string): void {
    if (this.closed || this.res.writableEnded) return;
    this.lastWriteMs = Date.now();
    this.res.write(text);
  }
}

/** Resolve after `ms`, or at once when the signal fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
