/**
 * Sync steps (docs/palace-behaviour.md §12): classify every stored source in scope, then delete only the
 * provably stale ones — files ignored by .gitignore now, and files that are gone while a sibling
 * in the same directory is still visible (a deleted file leaves neighbours; an unmounted volume
 * takes them all, and such sources stay `unresolved`).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { invalidArgument } from '../../core/errors.js';
import { isGitignored } from '../../palace/sources/scan.js';
import type { Fence, SyncSpec } from '../job.js';
import { pathAllowed, resolveLocalSource, sourcePolicy } from '../../palace/sources/sources.js';
import type { SourceRow } from '../../stores/ports/drawers/drawer-index.js';
import type { SyncReport } from './types.js';
import type { ActivityDeps } from '../activity-deps.js';
import { checkFence } from '../fence.js';
import type { GuardedSource } from './guard.js';
import { syncGuard } from './guard.js';

type Verdict = 'kept' | 'gitignored' | 'absent' | 'missing' | 'unresolved' | 'no_source' | 'out_of_scope';

interface Plan {
  removable: { wing: string; source_file: string }[];
}

async function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(() => true, () => false);
}

/** Deepest ancestor holding `.git` or a `.gitignore` (auto-detected project root). */
async function detectRoot(file: string, cache: Map<string, string | null>): Promise<string | null> {
  let dir = path.dirname(file);
  const seen: string[] = [];
  for (;;) {
    if (cache.has(dir)) {
      const r = cache.get(dir)!;
      for (const d of seen) cache.set(d, r);
      return r;
    }
    seen.push(dir);
    if ((await exists(path.join(dir, '.git'))) || (await exists(path.join(dir, '.gitignore')))) {
      for (const d of seen) cache.set(d, dir);
      return dir;
    }
    const parent = path.dirname(dir);
    if (parent === dir) {
      for (const d of seen) cache.set(d, null);
      return null;
    }
    dir = parent;
  }
}

function under(root: string, file: string): boolean {
  const rel = path.relative(root, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

async function allSources(deps: ActivityDeps, wing: string | undefined): Promise<SourceRow[]> {
  const out: SourceRow[] = [];
  for (let after: string | undefined, more = true; more;) {
    const page = await deps.stores.drawers.sources({ wing }, after, 1000);
    out.push(...page.items);
    after = page.next;
    more = after !== undefined;
  }
  return out;
}

async function classify(file: string, root: string): Promise<Verdict> {
  try {
    await fs.lstat(file);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'absent' : 'unresolved';
  }
  return (await isGitignored(root, path.relative(root, file).split(path.sep).join('/'))) ? 'gitignored' : 'kept';
}

/** The classified sources in scope with their file states (which carry the root their mine recorded). */
async function guardedSources(deps: ActivityDeps, verdicts: Map<SourceRow, Verdict>, roots: Map<SourceRow, string>): Promise<GuardedSource[]> {
  const byWing = new Map<string, SourceRow[]>();
  for (const s of roots.keys()) byWing.set(s.wing, [...(byWing.get(s.wing) ?? []), s]);
  const out: GuardedSource[] = [];
  for (const [wing, rows] of byWing) {
    for (let i = 0; i < rows.length; i += 1000) {
      const page = rows.slice(i, i + 1000);
      const states = await deps.stores.drawers.fileStates(wing, page.map((s) => s.source_file));
      for (const s of page) {
        const v = verdicts.get(s);
        out.push({ wing, source_file: s.source_file, drawers: s.drawers, removable: v === 'gitignored' || v === 'missing', root: roots.get(s)!,
          state: states.get(s.source_file) });
      }
    }
  }
  return out;
}

export async function syncScan(deps: ActivityDeps, input: { jobId: string; spec: SyncSpec }): Promise<{ planId: string; report: SyncReport }> {
  const { spec } = input;
  if (spec.apply && !spec.wing && !spec.projectDir)
    throw invalidArgument('apply', 'scope_required', 'apply=true needs wing or project_dir (a guard against pruning every wing of the palace)');
  // The caller's roots are checked again here: nothing outside them is even looked at.
  const policy = sourcePolicy(deps.config, { carried: spec.sourceBounds });
  const fixedRoot = spec.projectDir ? await resolveLocalSource('project_dir', spec.projectDir, policy) : undefined;
  const rootCache = new Map<string, string | null>();
  const sources = await allSources(deps, spec.wing);
  const verdicts = new Map<SourceRow, Verdict>();
  const roots = new Map<SourceRow, string>();
  for (const s of sources) {
    const file = s.source_file;
    if (!file || !path.isAbsolute(file)) {
      verdicts.set(s, 'no_source');
      continue;
    }
    if (!(await pathAllowed(file, policy))) {
      verdicts.set(s, 'out_of_scope');
      continue;
    }
    const root = fixedRoot ?? (await detectRoot(file, rootCache));
    if (!root || !under(root, file)) {
      verdicts.set(s, 'out_of_scope');
      continue;
    }
    roots.set(s, root);
    verdicts.set(s, await classify(file, root));
  }
  // An absent file is missing only while a sibling seen in this scan is still a regular file.
  const witnesses = new Map<string, string[]>();
  for (const [s, v] of verdicts)
    if (v === 'kept' || v === 'gitignored') {
      const d = path.dirname(s.source_file);
      witnesses.set(d, [...(witnesses.get(d) ?? []), s.source_file]);
    }
  for (const [s, v] of verdicts) {
    if (v !== 'absent') continue;
    let witnessed = false;
    for (const w of witnesses.get(path.dirname(s.source_file)) ?? []) {
      if (w !== s.source_file && (await fs.stat(w).then((st) => st.isFile(), () => false))) {
        witnessed = true;
        break;
      }
    }
    verdicts.set(s, witnessed && !(await exists(s.source_file)) ? 'missing' : 'unresolved');
  }
  const guard = await syncGuard(await guardedSources(deps, verdicts, roots), spec.force === true);
  const report: SyncReport = { scanned: 0, kept: 0, gitignored: 0, missing: 0, unresolved: 0, no_source: 0, out_of_scope: 0, removed_drawers: 0,
    removed_closets: 0, dry_run: !spec.apply, by_source: {}, unresolved_by_source: {}, guard };
  const plan: Plan = { removable: [] };
  for (const [s, v] of verdicts) {
    const n = s.drawers;
    report.scanned += n;
    if (v === 'absent') continue;
    report[v] += n;
    if (v === 'gitignored' || v === 'missing') {
      report.by_source[s.source_file] = (report.by_source[s.source_file] ?? 0) + n;
      plan.removable.push({ wing: s.wing, source_file: s.source_file });
    } else if (v === 'unresolved') {
      report.unresolved_by_source[s.source_file] = (report.unresolved_by_source[s.source_file] ?? 0) + n;
    }
  }
  const planId = `${input.jobId}:sync-plan`;
  await deps.stores.jobs.putBlob(planId, plan);
  return { planId, report };
}

export async function syncApply(deps: ActivityDeps, input: { jobId: string; spec: SyncSpec; planId: string; fence?: Fence }): Promise<{ removed: number }> {
  const plan = (await deps.stores.jobs.getBlob(input.planId)) as Plan | undefined;
  if (!plan) throw invalidArgument('planId', 'exists', `sync plan ${input.planId} not found`);
  let removed = 0;
  for (const r of plan.removable) {
    if (input.fence) await checkFence(deps.stores.locks, input.fence);
    removed += await deps.stores.drawers.deleteWhere({ wing: r.wing, sourceFile: r.source_file });
    await deps.stores.drawers.deleteFileStates(r.wing, [r.source_file]);
  }
  return { removed };
}
