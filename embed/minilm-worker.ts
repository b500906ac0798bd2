/**
 * Worker thread that owns the process's MiniLM session (started by embed/minilm.ts). Tokenising,
 * inference and pooling block whichever thread runs them for seconds per batch, so they run here
 * and the main thread's event loop stays free.
 *
 * Requests are not queued behind each other: between two ONNX batches of a long request the
 * worker takes the next message, so a one-text search embed waits for at most one batch of a mine.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MiniLmModel } from './minilm-model.js';
import { toWireError, type FromWorker, type ToWorker, type WorkerInit } from './minilm-worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('embed/minilm-worker.ts must run as a worker thread');
const init = workerData as WorkerInit;

function send(message: FromWorker, transfer: ArrayBuffer[] = []): void {
  port!.postMessage(message, transfer);
}

const loading = MiniLmModel.load(init.files, init.intraOpNumThreads);

loading.then(
  () => undefined,
  (error: unknown) => {
    // The main thread forgets this worker and starts a fresh one on the next embed (e.g. after a fetch).
    send({ type: 'load-failed', error: toWireError(error) });
    port.close();
  },
);

async function embed(id: number, texts: string[], batchSize: number): Promise<void> {
  try {
    const model = await loading;
    const vectors = await model.embed(texts, batchSize);
    send({ type: 'vectors', id, vectors }, vectors.map((vector) => vector.buffer as ArrayBuffer));
  } catch (error) {
    send({ type: 'error', id, error: toWireError(error) });
  }
}

async function close(): Promise<void> {
  const model = await loading.catch(() => undefined);
  await model?.release();
  port!.close();
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'embed') void embed(message.id, message.texts, message.batchSize);
  else void close();
});
