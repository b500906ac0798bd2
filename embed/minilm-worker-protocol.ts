/**
 * Messages between MiniLmEmbedder (main thread) and embed/minilm-worker.ts. Errors cross as plain
 * fields because structured cloning keeps only the message of an Error, not a PalaceError's code,
 * field, rule or details.
 */
import { PalaceError, type ErrorCode } from '../core/errors.js';
import type { MiniLmModelFiles } from './model-locator.js';
import type { Encoding } from './minilm-model.js';

/** `workerData` of the worker: which model to load, how it pools, and with how many onnxruntime threads. */
export interface WorkerInit {
  files: MiniLmModelFiles;
  encoding: Encoding;
  intraOpNumThreads: number;
}

export type ToWorker =
  | { type: 'embed'; id: number; texts: string[]; batchSize: number }
  /** The caller gave up on request `id` (already answered on its side): drop it, no reply. */
  | { type: 'cancel'; id: number }
  | { type: 'close' };

export type FromWorker =
  | { type: 'vectors'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; error: WireError }
  | { type: 'load-failed'; error: WireError };

export interface WireError {
  code: ErrorCode;
  message: string;
  field: string | undefined;
  rule: string | undefined;
  retryable: boolean;
  store: string | undefined;
  details: Record<string, unknown> | undefined;
}

export function toWireError(error: unknown): WireError {
  if (error instanceof PalaceError) {
    const { code, message, field, rule, retryable, store, details } = error;
    return { code, message, field, rule, retryable, store, details };
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { code: 'internal', message: `The embedding worker failed: ${message}`, field: undefined, rule: undefined, retryable: false, store: undefined,
    details: undefined };
}

export function fromWireError(wire: WireError): PalaceError {
  const { code, message, ...init } = wire;
  return new PalaceError(code, message, init);
}
