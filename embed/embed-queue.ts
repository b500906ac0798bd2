/**
 * The order in which the embedding worker runs the ONNX runs of the requests it holds.
 *
 * The oldest request runs to its end before the next one starts. Of two mining batches in flight,
 * one therefore finishes early, and its writes and the planning of the batch after it overlap the
 * other's embedding. When requests were interleaved run by run, both finished together and the
 * embedder idled while both were written and the next two planned (0.2–0.4 s per pair of 10 s
 * batches). A request with one run left (a search's query is one run) goes first, so it waits
 * for at most the run in progress, also when it arrives during that run.
 */
import type { MiniLmModel } from './minilm-model.js';

export type EmbedReply = { id: number; vectors: Float32Array[] } | { id: number; error: unknown };

interface Request {
  id: number;
  texts: string[];
  batchSize: number;
  planned?: { tokenIds: number[][]; runs: number[][] };
  next: number;
  vectors: Float32Array[];
}

export class EmbedQueue {
  private readonly waiting: Request[] = [];
  private draining = false;

  constructor(
    private readonly model: Promise<MiniLmModel>,
    private readonly reply: (reply: EmbedReply) => void,
  ) {}

  push(id: number, texts: string[], batchSize: number): void {
    this.waiting.push({ id, texts, batchSize, next: 0, vectors: new Array<Float32Array>(texts.length) });
    if (!this.draining) void this.drain();
  }

  /** Drops request `id` without a reply (its caller gave up): no further run of it starts. */
  cancel(id: number): void {
    const request = this.waiting.find((r) => r.id === id);
    if (request !== undefined) this.remove(request);
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.waiting.length > 0) {
        let model: MiniLmModel;
        try {
          model = await this.model;
        } catch (error) {
          for (const r of this.waiting.splice(0)) this.reply({ id: r.id, error });
          return;
        }
        // Requests are port messages, handed over between macrotasks only: yield one so those
        // posted during the last run (its continuation is a microtask) are in the choice.
        await new Promise((resolve) => setImmediate(resolve));
        const request = this.choose(model);
        if (request === undefined) continue;
        try {
          const { tokenIds, runs } = request.planned!;
          if (request.next < runs.length) {
            const run = runs[request.next++]!;
            const vectors = await model.run(run.map((i) => tokenIds[i]!));
            // Cancelled during this run: nobody waits for the rest.
            if (!this.waiting.includes(request)) continue;
            run.forEach((inputIndex, j) => {
              request.vectors[inputIndex] = vectors[j]!;
            });
          }
          if (request.next >= runs.length) {
            this.remove(request);
            this.reply({ id: request.id, vectors: request.vectors });
          }
        } catch (error) {
          this.remove(request);
          this.reply({ id: request.id, error });
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** The request whose next run goes now: one with a single run left, else the oldest. */
  private choose(model: MiniLmModel): Request | undefined {
    for (const r of [...this.waiting]) {
      if (r.planned) continue;
      try {
        r.planned = model.plan(r.texts, r.batchSize);
      } catch (error) {
        this.remove(r);
        this.reply({ id: r.id, error });
      }
    }
    return this.waiting.find((r) => r.planned!.runs.length - r.next <= 1) ?? this.waiting[0];
  }

  private remove(request: Request): void {
    const at = this.waiting.indexOf(request);
    if (at >= 0) this.waiting.splice(at, 1);
  }
}
