/**
 * Mining on the embedded profile end to end: real files, the real MiniLM embedder, SQLite, the
 * in-process job runner. Checks the incremental promises of the drawers issue and bad input.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../app/config.js';
import { PalaceError } from '../../core/errors.js';
import type { MineSpec } from '../../jobs/job.js';
import { search } from '../../palace/search/search.js';
import type { Runtime } from '../../palace/runtime.js';
import { openRuntime } from '../../app/runtime.js';
import { dirMineSpec } from '../helpers/mine-spec.js';
import { useEmbedderInTempDir } from '../helpers/real-embedder.js';

const fx = useEmbedderInTempDir('mempalace-mine-');
let project: string;
let rt: Runtime;

const mineSpec = (over: Partial<MineSpec> = {}): MineSpec => dirMineSpec(project, 'sample', 'tester', over);

async function mine(over: Partial<MineSpec> = {}) {
  const started = await rt.jobs.start(mineSpec(over));
  return rt.jobs.wait(started.job_id, 120_000);
}

async function allIds(): Promise<string[]> {
  const page = await rt.stores.drawers.list({ wing: 'sample' }, 0, 10_000);
  return page.items.map((d) => d.id).sort();
}

beforeAll(async () => {
  project = path.join(fx.tmp, 'project');
  await fs.mkdir(path.join(project, 'backend'), { recursive: true });
  await fs.mkdir(path.join(project, 'docs'), { recursive: true });
  await fs.writeFile(path.join(project, 'backend', 'auth.py'),
    `def validate_token(token):\n    """Check the bearer token against the session store."""\n${
      '    # expiry and signature are checked before the scope\n'.repeat(30)
    }    return token in SESSIONS\n`);
  await fs.writeFile(path.join(project, 'docs', 'architecture.md'),
    `# Architecture\n\nThe ingest service batches events into Kafka topics and the indexer writes them to storage.\n\n${
      'The retry policy uses exponential backoff with jitter for every transient error.\n'.repeat(25)
    }`);
  await fs.writeFile(path.join(project, 'docs', 'tiny.md'), 'too short');
  await fs.writeFile(path.join(project, 'logo.txt'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01, 0x02]));
  await fs.writeFile(path.join(project, 'latin1.txt'), Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' au lait '.repeat(20))]));
  await fs.writeFile(path.join(project, '.gitignore'), 'secret/\n');
  await fs.mkdir(path.join(project, 'secret'));
  await fs.writeFile(path.join(project, 'secret', 'keys.md'), 'the password is hunter2 '.repeat(10));
  const config = loadConfig({ ...process.env, MEMPALACE_PALACE: path.join(fx.tmp, 'palace') });
  rt = await openRuntime(config, { embedder: fx.embedder });
});

afterAll(async () => {
  await rt?.close();
});

describe('mining a project on the embedded profile', () => {
  it('mines text files, skips binary, non-UTF-8, short and ignored files with reasons, and finds the content', async () => {
    const p = await mine();
    expect(p.state).toBe('completed');
    expect(p.files_mined).toBe(2);
    expect(p.drawers_written).toBeGreaterThan(2);
    const output = String((p.result as { output: string }).output);
    expect(output).toContain('Files processed: 2');
    const ids = await allIds();
    expect(ids.length).toBe(p.drawers_written);
    const sources = (await rt.stores.drawers.sources({ wing: 'sample' }, undefined, 100)).items.map((s) => path.basename(s.source_file));
    expect(sources.sort()).toEqual(['architecture.md', 'auth.py']);
    const states = await rt.stores.drawers.fileStates('sample',
      [path.join(project, 'logo.txt'), path.join(project, 'latin1.txt'), path.join(project, 'docs', 'tiny.md')].map((f) => f));
    const reasons = [...states.values()].map((s) => String(s.extra?.skip_reason)).sort();
    expect(reasons.some((r) => r.startsWith('too_short'))).toBe(true);
    const r = await search(rt.drawerContext, { query: 'how is the bearer token validated' }, { sanitize: true, defaultMaxDistance: 1.5 });
    expect(r.results[0]?.source_file).toBe('auth.py');
  });

  it('a second mine adds nothing and reports the files unchanged', async () => {
    const before = await allIds();
    const p = await mine();
    expect(p.state).toBe('completed');
    expect(p.files_mined).toBe(0);
    expect(p.drawers_written).toBe(0);
    expect(p.files_skipped).toBe(p.files_seen);
    expect(await allIds()).toEqual(before);
  });

  it('editing one file re-mines only that file and leaves no stale chunk', async () => {
    const file = path.join(project, 'docs', 'architecture.md');
    await fs.writeFile(file,
      `# Architecture\n\nEvents now go to a Redis stream consumed by the indexer.\n\n${
        'Consumers acknowledge each entry after the write is durable.\n'.repeat(5)
      }`);
    const authBefore = (await rt.stores.drawers.list({ wing: 'sample', sourceFile: path.join(project, 'backend', 'auth.py') }, 0, 1000)).items;
    const p = await mine();
    expect(p.files_mined).toBe(1);
    const docRows = (await rt.stores.drawers.list({ wing: 'sample', sourceFile: file }, 0, 1000)).items;
    expect(docRows.length).toBe(p.drawers_written);
    expect(docRows.every((d) => !d.content.includes('Kafka'))).toBe(true);
    const authAfter = (await rt.stores.drawers.list({ wing: 'sample', sourceFile: path.join(project, 'backend', 'auth.py') }, 0, 1000)).items;
    expect(authAfter.map((d) => [d.id, d.meta.filed_at])).toEqual(authBefore.map((d) => [d.id, d.meta.filed_at]));
  });

  it('a dry run writes nothing', async () => {
    const before = await allIds();
    await fs.writeFile(path.join(project, 'docs', 'new.md'), 'A new design note about the cache eviction policy and its metrics. '.repeat(5));
    const p = await mine({ dryRun: true });
    expect(p.state).toBe('completed');
    expect(p.drawers_written).toBeGreaterThan(0);
    expect(await allIds()).toEqual(before);
  });

  it('rejects a missing source, a source outside the allowed roots and an illegal wing, writing nothing', async () => {
    const before = await allIds();
    const missing = await mine({ source: { kind: 'dir', path: path.join(fx.tmp, 'nope') } });
    expect(missing.state).toBe('failed');
    expect(missing.error).toContain('source directory not found');
    const bad = await mine({ wing: '../etc' });
    expect(bad.state).toBe('failed');
    expect(bad.error).toContain('wing');
    expect(await allIds()).toEqual(before);
    const limited = loadConfig({ ...process.env, MEMPALACE_PALACE: path.join(fx.tmp, 'palace2'), MEMPALACE_ALLOWED_ROOTS: path.join(fx.tmp, 'elsewhere') });
    const rt2 = await openRuntime(limited, { embedder: fx.embedder });
    try {
      const outside = await rt2.jobs.start(mineSpec());
      const done = await rt2.jobs.wait(outside.job_id, 30_000);
      expect(done.state).toBe('failed');
      expect(done.error).toContain('outside the allowed roots');
    } finally {
      await rt2.close();
    }
  });

  it('refuses a second concurrent mine of the same source with already_running and the job id', async () => {
    const first = await rt.jobs.start(mineSpec());
    const err = await rt.jobs.start(mineSpec()).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(PalaceError);
    expect((err as PalaceError).code).toBe('already_running');
    expect((err as PalaceError).details?.job_id).toBe(first.job_id);
    await rt.jobs.wait(first.job_id, 60_000);
  });

  it("labels drawers with the entity registry's names, re-read when it changes, and refuses a broken registry before writing", async () => {
    const registry = path.join(fx.tmp, 'known_entities.json');
    const src = path.join(fx.tmp, 'entities-project');
    await fs.mkdir(src);
    const notes = path.join(src, 'notes.md');
    // Lower case and said once per chunk: the capitalised-word rule alone never finds it.
    await fs.writeFile(notes, 'The ingest pipeline hands each batch to zephyrdb and replays it after a failure.\n'.repeat(6));
    const rt3 = await openRuntime(loadConfig({ ...process.env, MEMPALACE_PALACE: path.join(fx.tmp, 'palace-entities'), MEMPALACE_ENTITY_REGISTRY: registry }), {
      embedder: fx.embedder,
    });
    try {
      const run = async () => rt3.jobs.wait((await rt3.jobs.start(mineSpec({ source: { kind: 'dir', path: src }, wing: 'ent' }))).job_id, 60_000);
      const entities = async () => (await rt3.stores.drawers.list({ wing: 'ent' }, 0, 100)).items.map((d) => d.meta.entities);
      expect((await run()).state).toBe('completed');
      expect(await entities()).toEqual([undefined]);

      await fs.writeFile(registry, '{"people": "Ada"}');
      await fs.appendFile(notes, 'A later line names the storage engine zephyrdb once more.\n');
      const broken = await run();
      expect(broken.state).toBe('failed');
      expect(broken.error).toContain('known_entities.json: people must be a list of names or a map of name to code');
      expect(await entities()).toEqual([undefined]);

      await fs.writeFile(registry, JSON.stringify({ projects: ['ZephyrDB'], topics_by_wing: { ent: ['replays'] } }));
      expect((await run()).state).toBe('completed');
      expect(await entities()).toEqual(['ZephyrDB;replays']);
    } finally {
      await rt3.close();
    }
  });

  it('mines chat exports in convos mode into exchange drawers with rooms', async () => {
    const chats = path.join(fx.tmp, 'chats');
    await fs.cp(path.join(__dirname, '..', 'fixtures', 'chat'), chats, { recursive: true });
    const p = await mine({ source: { kind: 'dir', path: chats }, mode: 'convos', wing: 'chats' });
    expect(p.state).toBe('completed');
    expect(p.files_mined).toBeGreaterThanOrEqual(8);
    const rows = (await rt.stores.drawers.list({ wing: 'chats' }, 0, 10_000)).items;
    expect(rows.length).toBe(p.drawers_written);
    expect(rows.every((d) => d.meta.ingest_mode === 'convos' && d.meta.extract_mode === 'exchange')).toBe(true);
    // Conversation drawers get no entities (docs/palace-behaviour.md §4.8), so no hallways either.
    expect(rows.filter((d) => d.meta.entities !== undefined)).toEqual([]);
    const again = await mine({ source: { kind: 'dir', path: chats }, mode: 'convos', wing: 'chats' });
    expect(again.drawers_written).toBe(0);
  });

  it('extracts office and PDF documents in extract mode, recording why the others were skipped', async () => {
    const docs = path.join(fx.tmp, 'docs');
    await fs.cp(path.join(__dirname, '..', 'fixtures', 'docs'), docs, { recursive: true });
    const p = await mine({ source: { kind: 'dir', path: docs }, mode: 'extract', wing: 'docs' });
    expect(p.state).toBe('completed');
    const rows = (await rt.stores.drawers.list({ wing: 'docs' }, 0, 10_000)).items;
    const mined = new Set(rows.map((d) => path.basename(d.meta.source_file)));
    for (const f of ['incident-review.docx', 'roadmap.pptx', 'budget.xlsx', 'design-notes.pdf']) expect(mined).toContain(f);
    expect(rows.every((d) => d.meta.ingest_mode === 'extract')).toBe(true);
    const states = await rt.stores.drawers.fileStates('docs', ['encrypted.docx', 'corrupt.docx'].map((f) => path.join(docs, f)));
    expect(String(states.get(path.join(docs, 'encrypted.docx'))?.extra?.skip_reason)).toContain('ENCRYPTED');
    expect(states.get(path.join(docs, 'corrupt.docx'))?.extra?.skip_reason).toBeDefined();
  });
});
