/**
 * The activities the mine orchestration calls, and what they exchange. Types only: workflow code
 * must stay free of I/O and of Node built-ins, so it imports these shapes and never the implementations.
 */
import type { Fence, JobCounters, MineSpec } from '../job.js';

export interface ScanResult {
  /** Key under which the file manifest was stored (never the manifest itself). */
  manifestId: string;
  totalFiles: number;
  wing: string;
  sourceIdentity: string;
  /** The commit mined, for git sources. */
  commit?: string;
  skippedAtScan: number;
  warnings: string[];
  /** A directory source's root as mined (jobs/source/root-identity.ts), recorded in its file states. */
  sourceRoot?: { root: string; root_dev: string; root_ino: string };
}

export interface BatchInput {
  jobId: string;
  spec: MineSpec;
  scan: ScanResult;
  offset: number;
  count: number;
  /** Lease the batch must still hold when it writes (fencing). */
  fence?: Fence;
}

export interface BatchResult extends JobCounters {
  lastFile?: string;
  errorsDetail: { file: string; error: string }[];
  /** Files that produced no drawers and why (unchanged files are only counted). */
  skipsDetail: { file: string; reason: string }[];
  /** Files per room in this batch (for the summary). */
  byRoom: Record<string, number>;
}

export interface MineActivities {
  scanSource(input: { jobId: string; spec: MineSpec }): Promise<ScanResult>;
  mineBatch(input: BatchInput): Promise<BatchResult>;
  finishMine(input: { jobId: string; spec: MineSpec; scan: ScanResult; fence?: Fence }): Promise<{ hallways: number; warnings: string[] }>;
}
