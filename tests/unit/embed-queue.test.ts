/**
 * The embedding worker's run order (embed/embed-queue.ts) over a model that records its runs: the
 * oldest request runs to its end first, a request with one run left goes before it, a cancelled
 * request stops after the run in progress, and a failing request or model load answers with its
 * error while the others are still served.
 */
import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import type { EmbedReply } from '../../embed/embed-queue.js';
import { EmbedQueue } from '../../embed/embed-queue.js';
import type { MiniLmModel } from '../../embed/minilm-model.js';

/**
 * Texts are names like "a3": one "token" each; a run answers after a macrotask, as onnxruntime's
 * does. `during(k)` is called inside the k-th run (from 0), while it holds the thread.
 */
function recordingModel(runs: string[], failOn?: string, during?: (k: number) => void): MiniLmModel {
  const names: string[] = [];
  return {
    plan(texts: string[], batchSize: number) {
      const tokenIds = texts.map((t) => {
        names.push(t);
        return [names.length - 1];
      });
      const order = texts.map((_, i) => i);
      const cut: number[][] = [];
      for (let i = 0; i < order.length; i += batchSize) cut.push(order.slice(i, i + batchSize));
      return { tokenIds, runs: cut };
    },
    async run(batch: number[][]) {
      await new Promise((r) => setImmediate(r));
      during?.(runs.length);
      const ran = batch.map(([id]) => names[id!]!);
      runs.push(ran.join(','));
      if (failOn !== undefined && ran.includes(failOn)) throw new Error(`run failed on ${failOn}`);
      return ran.map((name) => Float32Array.of(name.length));
    },
  } as unknown as MiniLmModel;
}

function collect(model: Promise<MiniLmModel>): { queue: EmbedQueue; replies: EmbedReply[]; settled: Promise<void>; expect: (n: number) => void } {
  const replies: EmbedReply[] = [];
  let want = 0;
  let done!: () => void;
  const settled = new Promise<void>((r) => (done = r));
  const queue = new EmbedQueue(model, (reply) => {
    replies.push(reply);
    if (replies.length === want) done();
  });
  return { queue, replies, settled, expect: (n) => (want = n) };
}

describe('EmbedQueue', () => {
  it('runs the oldest request to its end before the next, and a one-run request before both', async () => {
    const runs: string[] = [];
    const c = collect(Promise.resolve(recordingModel(runs, undefined, (k) => k === 0 && c.queue.push(3, ['q1'], 2))));
    c.expect(3);
    c.queue.push(1, ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'], 2);
    c.queue.push(2, ['b1', 'b2', 'b3', 'b4'], 2);
    await c.settled;
    expect(c.replies.map((r) => r.id)).toEqual([3, 1, 2]);
    expect(runs).toEqual(['a1,a2', 'q1', 'a3,a4', 'a5,a6', 'b1,b2', 'b3,b4']);
    const first = c.replies.find((r) => r.id === 1)!;
    expect('vectors' in first && first.vectors.map((v) => v[0])).toEqual([2, 2, 2, 2, 2, 2]);
  });

  it('takes a request posted to its port during a run before it chooses the next run', async () => {
    // The worker's requests arrive as port messages, which the event loop hands over only between
    // macrotasks; a choice made in the run's own continuation would not see one posted meanwhile.
    const runs: string[] = [];
    const { port1, port2 } = new MessageChannel();
    const c = collect(Promise.resolve(recordingModel(runs, undefined, (k) => k === 0 && port1.postMessage(['q1']))));
    port2.on('message', (texts: string[]) => c.queue.push(2, texts, 2));
    try {
      c.expect(2);
      c.queue.push(1, ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'], 2);
      await c.settled;
      expect(runs).toEqual(['a1,a2', 'q1', 'a3,a4', 'a5,a6']);
      expect(c.replies.map((r) => r.id)).toEqual([2, 1]);
    } finally {
      port2.close();
    }
  });

  it('drops a request cancelled during one of its runs: no further run of it, no reply, the next one served', async () => {
    const runs: string[] = [];
    const c = collect(Promise.resolve(recordingModel(runs, undefined, (k) => k === 1 && c.queue.cancel(1))));
    c.expect(1);
    c.queue.push(1, ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'], 2);
    c.queue.push(2, ['b1', 'b2', 'b3', 'b4'], 2);
    await c.settled;
    expect(runs).toEqual(['a1,a2', 'a3,a4', 'b1,b2', 'b3,b4']);
    expect(c.replies.map((r) => r.id)).toEqual([2]);
  });

  it('drops a cancelled request that has not run yet, and ignores an unknown id', async () => {
    const runs: string[] = [];
    const c = collect(Promise.resolve(recordingModel(runs, undefined, (k) => {
      if (k === 0) {
        c.queue.cancel(2);
        c.queue.cancel(99);
      }
    })));
    c.expect(2);
    c.queue.push(1, ['a1', 'a2', 'a3', 'a4'], 2);
    c.queue.push(2, ['b1', 'b2', 'b3', 'b4'], 2);
    c.queue.push(3, ['c1', 'c2', 'c3'], 2);
    await c.settled;
    expect(runs).toEqual(['a1,a2', 'a3,a4', 'c1,c2', 'c3']);
    expect(c.replies.map((r) => r.id)).toEqual([1, 3]);
  });

  it('answers an empty request at once, with no run', async () => {
    const runs: string[] = [];
    const c = collect(Promise.resolve(recordingModel(runs)));
    c.expect(1);
    c.queue.push(7, [], 4);
    await c.settled;
    expect(c.replies).toEqual([{ id: 7, vectors: [] }]);
    expect(runs).toEqual([]);
  });

  it('answers a request whose run fails with the error, and goes on with the others', async () => {
    const runs: string[] = [];
    const c = collect(Promise.resolve(recordingModel(runs, 'a3')));
    c.expect(2);
    c.queue.push(1, ['a1', 'a2', 'a3', 'a4'], 2);
    c.queue.push(2, ['b1', 'b2', 'b3', 'b4'], 2);
    await c.settled;
    expect(c.replies.map((r) => [r.id, 'error' in r ? String(r.error) : 'vectors'])).toEqual([[1, 'Error: run failed on a3'], [2, 'vectors']]);
    expect(runs).toEqual(['a1,a2', 'a3,a4', 'b1,b2', 'b3,b4']);
  });

  it('answers every waiting request with the load error when the model fails to load', async () => {
    const c = collect(Promise.reject(new Error('no model here')));
    c.expect(2);
    c.queue.push(1, ['a1'], 2);
    c.queue.push(2, ['b1', 'b2', 'b3'], 2);
    await c.settled;
    expect(c.replies.map((r) => [r.id, 'error' in r ? String(r.error) : 'vectors'])).toEqual([[1, 'Error: no model here'], [2, 'Error: no model here']]);
  });
});
