/**
 * Fault injection for embedding: the real embedder, except that the first call embedding a text
 * that contains `marker` is held before it starts, as a stalled process would hold it: for a fixed
 * time whatever its signal says, or until its signal aborts. Records every call and how it ended.
 */
import { isPalaceError } from '../../core/errors.js';
import type { EmbedOptions, Embedder } from '../../embed/embedder.js';
import type { ModelIdentity } from '../../embed/model-identity.js';

export interface EmbedCall {
  marked: boolean;
  held: boolean;
  /** Whether the call's signal had aborted when the hold ended. */
  abortedAfterHold?: boolean;
  /** `vectors`, or the code of the error it ended with. */
  outcome?: string;
}

export class HoldingEmbedder implements Embedder {
  readonly calls: EmbedCall[] = [];
  private holding = false;
  private heldStarted!: () => void;
  /** Resolves once the held call has started waiting. */
  readonly holdStarted = new Promise<void>((resolve) => (this.heldStarted = resolve));

  /** `hold`: milliseconds, or `until-aborted` (bounded by `maxMs` so a broken test still ends). */
  constructor(private readonly inner: Embedder, private readonly marker: string, private readonly hold: number | 'until-aborted',
    private readonly maxMs = 120_000) {}

  get model(): string {
    return this.inner.model;
  }

  get dimension(): number {
    return this.inner.dimension;
  }

  get identity(): ModelIdentity {
    return this.inner.identity;
  }

  get heldCall(): EmbedCall | undefined {
    return this.calls.find((c) => c.held);
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const marked = texts.some((t) => t.includes(this.marker));
    const call: EmbedCall = { marked, held: marked && !this.holding };
    this.calls.push(call);
    if (call.held) {
      this.holding = true;
      this.heldStarted();
      await this.wait(options.signal);
      call.abortedAfterHold = options.signal?.aborted ?? false;
    }
    try {
      const vectors = await this.inner.embed(texts, options);
      call.outcome = 'vectors';
      return vectors;
    } catch (e) {
      call.outcome = isPalaceError(e) ? e.code : String(e);
      throw e;
    }
  }

  /** Wait until the held call has ended, for at most `ms`. */
  async heldCallEnded(ms: number): Promise<EmbedCall | undefined> {
    for (let waited = 0; waited < ms && this.heldCall?.outcome === undefined; waited += 100) await new Promise((r) => setTimeout(r, 100));
    return this.heldCall;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    const ms = this.hold === 'until-aborted' ? this.maxMs : this.hold;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      if (this.hold === 'until-aborted') {
        signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      }
    });
  }
}
