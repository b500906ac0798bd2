/**
 * `mempalace eval` as a user runs it (a child process per command), on both input kinds and both
 * profiles: a conversational set filed into a throwaway palace (removed afterwards) or into
 * `--palace`, and JSON lines of drawer queries against a palace. The conversational fixture
 * (tests/fixtures/eval/conversations.json, written for this project) is also the conversational
 * quality gate: the default must not fall below the figures recorded in bench/README.md.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { dropClusterPalace } from '../helpers/cluster-palace.js';
import type { StrategyScores } from '../../palace/eval/run-eval.js';
import { runCli, ROOT } from '../helpers/cli.js';

const SET = path.join(ROOT, 'tests', 'fixtures', 'eval', 'conversations.json');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mempalace-eval-'));

/** Recorded 2026-12-03 on 56 questions, 10 of them date-anchored (bench/README.md, "Ranking"): union turn recall@10 0.955, session recall@5 0.964, MRR@10 0.717. */
const BASELINE = { turn10: 0.95, session5: 0.96, mrr: 0.71 };

interface Report {
  n: number;
  kind: string;
  skipped: number;
  strategies: Record<string, StrategyScores>;
  differences: Record<string, unknown>;
}

function mempalace(env: Record<string, string>, ...args: string[]): { code: number | null; report: Report | undefined; stdout: string; stderr: string } {
  const res = runCli(['--json', ...args], { env, timeoutMs: 280_000 });
  const last = res.stdout.trim().split('\n').pop();
  let report: Report | undefined;
  try {
    report = last ? (JSON.parse(last) as Report) : undefined;
  } catch {
    report = undefined;
  }
  return { code: res.code, report, stdout: res.stdout, stderr: res.stderr };
}

function opensearchIndices(): string[] {
  const res = spawnSync('curl', ['-s', `${process.env.OPENSEARCH_URL ?? 'http://127.0.0.1:9200'}/_cat/indices?h=index`], { encoding: 'utf8' });
  return res.stdout.split('\n').filter(Boolean);
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const embedded = { MEMPALACE_PROFILE: 'embedded' };
const cluster = { MEMPALACE_PROFILE: 'cluster' };
const results: Record<string, Report> = {};
/** JSON lines of drawer queries over the conversational set, once it is filed. */
const QUERIES = path.join(tmp, 'queries.jsonl');
fs.writeFileSync(QUERIES, [
  { query: 'Where did Mira sign a lease?', expected: ['harbour-s1'], category: 'move' },
  { query: 'Which shard timed out at month-end?', expected: ['ledger/ledger-s1'] },
  { query: 'Who beat them at the summer show?', expected: ['garden-s6'] },
].map((q) => JSON.stringify(q)).join('\n'));

describe('mempalace eval', () => {
  it('measures a conversational set in a throwaway embedded palace, every strategy side by side, at or above its baseline', () => {
    const res = mempalace(embedded, 'eval', SET);
    expect(res.code, res.stderr).toBe(0);
    const report = res.report!;
    expect(report.kind).toBe('conversations');
    expect(report.n).toBe(56);
    expect(Object.keys(report.strategies)).toEqual(['union', 'vector']);
    const union = report.strategies.union!;
    expect(union.turn!['recall@10']).toBeGreaterThanOrEqual(BASELINE.turn10);
    expect(union.session!['recall@5']).toBeGreaterThanOrEqual(BASELINE.session5);
    expect(union['mrr@10']).toBeGreaterThanOrEqual(BASELINE.mrr);
    expect(union['mrr@10']).toBeGreaterThanOrEqual(report.strategies.vector!['mrr@10']);
    expect(report.differences.vector).toBeDefined();
    results.embedded = report;
  });

  it('files into --palace when given, and then searches JSON lines of drawer queries there', () => {
    const palace = path.join(tmp, 'filed');
    const filed = mempalace(embedded, '--palace', palace, 'eval', SET, '--strategy', 'union');
    expect(filed.code, filed.stderr).toBe(0);
    expect(Object.keys(filed.report!.strategies)).toEqual(['union']);
    const res = mempalace(embedded, '--palace', palace, 'eval', QUERIES);
    expect(res.code, res.stderr).toBe(0);
    expect(res.report!.kind).toBe('drawers');
    expect(res.report!.n).toBe(3);
    expect(res.report!.strategies.union!['recall@10']).toBe(1);
    results.embeddedDrawers = res.report!;
  });

  it('refuses a missing set and a bad strategy with exit code 2 naming the field', () => {
    const missing = mempalace(embedded, 'eval', path.join(tmp, 'absent.json'));
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.stdout)).toMatchObject({ field: 'set', rule: 'readable_file' });
    const bad = mempalace(embedded, 'eval', SET, '--strategy', 'union,magic');
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ field: 'strategy', rule: 'one_of' });
  });

  it('measures the same set on the cluster profile in a throwaway palace it drops afterwards, with the same figures', () => {
    const before = opensearchIndices().filter((i) => i.startsWith('mempalace-eval-'));
    const res = mempalace(cluster, 'eval', SET);
    expect(res.code, res.stderr).toBe(0);
    expect(res.report!.n).toBe(56);
    expect(res.report!.strategies).toEqual(results.embedded!.strategies);
    expect(opensearchIndices().filter((i) => i.startsWith('mempalace-eval-'))).toEqual(before);
  });

  it('files into a cluster --palace and searches JSON lines of drawer queries there, with the embedded figures', async () => {
    const name = `t-eval-${randomBytes(4).toString('hex')}`;
    const env = { ...cluster, MEMPALACE_PALACE_NAME: name };
    const palace = path.join(tmp, name);
    try {
      const filed = mempalace(env, '--palace', palace, 'eval', SET, '--strategy', 'union');
      expect(filed.code, filed.stderr).toBe(0);
      const res = mempalace(env, '--palace', palace, 'eval', QUERIES);
      expect(res.code, res.stderr).toBe(0);
      expect(res.report!.kind).toBe('drawers');
      expect(res.report!.n).toBe(3);
      expect(res.report!.strategies).toEqual(results.embeddedDrawers!.strategies);
    } finally {
      await dropClusterPalace(loadConfig({ ...process.env, ...env, MEMPALACE_PALACE: palace }));
    }
  });
});
