/**
 * The requests in flight on the current runtime, so `mempalace_reconnect` never closes stores
 * under one: a reconnect first stops admitting requests (they wait, they do not fail), tells
 * long waits in flight to return what they have (their abort signal), waits for the in-flight
 * ones to finish, and only then swaps and closes the stores; the waiting requests then run on
 * the new runtime.
 */
export class RuntimeGate {
  private active = 0;
  private drained: (() => void)[] = [];
  private closing: Promise<void> | undefined;
  private readonly waits = new Set<AbortController>();

  /** Admit one request (waiting while a reconnect runs); call the returned `leave` once done. */
  async enter(): Promise<{ signal: AbortSignal; leave: () => void }> {
    while (this.closing) await this.closing;
    this.active++;
    const abort = new AbortController();
    this.waits.add(abort);
    let left = false;
    return {
      signal: abort.signal,
      leave: () => {
        if (left) return;
        left = true;
        this.waits.delete(abort);
        this.active--;
        if (this.active === 0) { for (const resolve of this.drained.splice(0)) resolve(); }
      },
    };
  }

  /** Run `fn` with no request in flight; requests arriving meanwhile wait for it. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    while (this.closing) await this.closing;
    let release!: () => void;
    this.closing = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      for (const abort of this.waits) abort.abort();
      if (this.active > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
      return await fn();
    } finally {
      this.closing = undefined;
      release();
    }
  }

  get inFlight(): number {
    return this.active;
  }
}
