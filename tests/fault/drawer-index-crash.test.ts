/**
 * Crash safety of the embedded drawer index: a writer killed with SIGKILL in the middle of a
 * long upsert loop leaves only whole batches (drawer, metadata, embedding and FTS row together),
 * and the derived ANN graph is repaired on the next open.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { DRAWER_DB_FILE } from '../../stores/embedded/drawers/drawer-db.js';
import { openSqliteDrawerIndex } from '../../stores/embedded/drawers/sqlite-drawer-index.js';
import { CRASH_BATCH_SIZE, crashRow } from './drawer-index-crash.rows.js';

const CHILD = fileURLToPath(new URL('./drawer-index-crash.child.ts', import.meta.url));

/** Runs the writer until it has reported `commits` batches, waits `delayMs`, then SIGKILLs it. */
async function writeUntilKilled(palace: string, start: number, commits: number, delayMs: number): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, palace, String(start)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const committed: number[] = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  await new Promise<void>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      for (const m of buffered.matchAll(/committed (\d+)\n/g)) if (!committed.includes(Number(m[1]))) committed.push(Number(m[1]));
      if (committed.length >= commits) resolve();
    });
    void exited.then(() => reject(new Error(`writer exited early: ${stderr}`)));
  });
  await new Promise((r) => setTimeout(r, delayMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  return committed;
}

describe('SqliteDrawerIndex under SIGKILL', () => {
  const palace = mkdtempSync(join(tmpdir(), 'drawer-index-crash-'));
  afterAll(() => rmSync(palace, { recursive: true, force: true }));

  const reported: number[] = [];
  let next = 0;
  for (const [round, delayMs] of [0, 350, 900].entries()) {
    it(`keeps only whole batches and repairs the ANN graph (round ${round + 1}, kill ${delayMs} ms after a commit)`, async () => {
      reported.push(...(await writeUntilKilled(palace, next, 2, delayMs)));
      const highest = Math.max(...reported);
      next = highest + 2;

      const db = new Database(join(palace, DRAWER_DB_FILE), { readonly: true });
      const counts = {
        drawers: db.prepare('SELECT count(*) FROM drawers').pluck().get() as number,
        embeddings: db.prepare('SELECT count(*) FROM drawer_embeddings').pluck().get() as number,
        fts: db.prepare('SELECT count(*) FROM drawer_fts').pluck().get() as number,
      };
      const perBatch = db.prepare("SELECT json_extract(meta, '$.batch') AS b, count(*) AS n FROM drawers GROUP BY b ORDER BY b").all() as { b: number;
        n: number }[];
      db.close();
      expect(counts.embeddings).toBe(counts.drawers);
      expect(counts.fts).toBe(counts.drawers);
      for (const { n } of perBatch) expect(n).toBe(CRASH_BATCH_SIZE);
      const batches = perBatch.map((p) => p.b);
      for (const b of reported) expect(batches).toContain(b);
      // At most one batch committed whose report the kill cut off.
      expect(batches.length - reported.length).toBeLessThanOrEqual(round + 1);

      const index = await openSqliteDrawerIndex(palace);
      try {
        // Round 1 never reaches a persist point, so its graph file is stale for sure.
        if (round === 0) expect(index.annStatus.outcome).toBe('repaired');
        else expect(['loaded', 'repaired', 'rebuilt']).toContain(index.annStatus.outcome);
        expect(index.annStatus.size).toBe(counts.drawers);
        for (const b of batches) {
          const sample = [0, 777, CRASH_BATCH_SIZE - 1].map((i) => crashRow(b, i, index.dimension));
          const got = await index.get(sample.map((s) => s.id));
          expect(got).toEqual(sample.map(({ id, content, meta }) => ({ id, content, meta })));
          const vectors = await index.embeddings(sample.map((s) => s.id));
          for (const s of sample) expect(Array.from(vectors.get(s.id)!)).toEqual(Array.from(s.embedding));
          expect((await index.lexical([`token_${b}_777`], 5)).map((d) => d.id)).toEqual([`crash_${b}_777`]);
          const hit = await index.knn(sample[1]!.embedding, 1);
          expect(hit[0]!.drawer.id).toBe(sample[1]!.id);
          expect(hit[0]!.distance).toBeCloseTo(0, 5);
        }
      } finally {
        await index.close();
      }
    });
  }
});
