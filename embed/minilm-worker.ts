/**
 * Worker thread that owns the process's MiniLM session (started by embed/minilm.ts). Tokenising,
 * inference and pooling block whichever thread runs them for seconds per batch, so they run here
 * and the main thread's event loop stays free.
 *
 * Requests are answered in the order embed/embed-queue.ts sets: the oldest first, except that a
 * request with one run left (a search's query) goes before it, waiting for at most one batch of a
 * mine. Between two runs the worker takes the next message, so a cancelled request stops after the
 * run in progress.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EmbedQueue } from './embed-queue.js';
import { MiniLmModel } from './minilm-model.js';
import { toWireError, type FromWorker, type ToWorker, type WorkerInit } from './minilm-worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('embed/minilm-worker.ts must run as a worker thread');
const init = workerData as WorkerInit;

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

const loading = MiniLmModel.load(init.files, init.encoding, init.intraOpNumThreads);

loading.then(
  () => undefined,
  (error: unknown) => {
    // The main thread forgets this worker and starts a fresh one on the next embed (e.g. after a fetch).
    send({ type: 'load-failed', error: toWireError(error) });
    port.close();
  },
);

const queue = new EmbedQueue(loading, (reply) => {
  if ('vectors' in reply) send({ type: 'vectors', id: reply.id, vectors: reply.vectors }, reply.vectors.map((vector) => vector.buffer as ArrayBuffer));
  else send({ type: 'error', id: reply.id, error: toWireError(reply.error) });
});

async function close(): Promise<void> {
  const model = await loading.catch(() => undefined);
  await model?.release();
  port!.close();
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'embed') queue.push(message.id, message.texts, message.batchSize);
  else if (message.type === 'cancel') queue.cancel(message.id);
  else void close();
});
