/**
 * The I/O steps of a mine: scan a source into a stored manifest; mine one batch of manifest
 * entries (read → skip unchanged → decode → chunk → room → embed in one batch → write per file →
 * record file state); finish with the wing's hallways. Every write is keyed by deterministic ids
 * and replaces what the same file wrote before, so a retried batch converges to the same drawers.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { chunkConversation } from '../../core/chat/conversation.js';
import { agentSessionsWing, CONVERSATION_EXTENSIONS, isConversationFileName } from '../../core/chat/files.js';
import { tryExtractDocument } from '../../core/extract/extract.js';
import { DOCUMENT_EXTENSIONS } from '../../core/extract/types.js';
import { chunkText } from '../../core/chunking.js';
import type { DrawerMeta, DrawerWrite, MetaValue } from '../../core/drawer.js';
import { filedAtNow } from '../../core/drawer.js';
import { PalaceError } from '../../core/errors.js';
import { ID_RECIPE, minedChunkId } from '../../core/ids.js';
import type { RoomConfig } from '../../core/project-config.js';
import { loadProjectConfig } from '../../palace/sources/project-config.js';
import { detectRoom } from '../../core/rooms.js';
import { ListedFileRefused, readListedFile } from '../../palace/sources/listed-file.js';
import type { ScanSkip } from '../../core/scan.js';
import { decodeUtf8File } from '../../core/scan.js';
import { scanProject } from '../../palace/sources/scan.js';
import { codePointLength, sha256Hex, strip } from '../../core/text.js';
import { validateName, wingSlug } from '../../core/validate.js';
import { emptyCounters } from '../progress.js';
import type { MineSpec } from '../job.js';
import type { SourcePolicy } from '../../palace/sources/sources.js';
import { isWithin, pathAllowed, resolveGitSource, sourcePolicy } from '../../palace/sources/sources.js';
import type { FileState } from '../../stores/ports/drawers/file-states.js';
import type { ManifestEntry } from '../../stores/ports/job-store.js';
import type { BatchInput, BatchResult, ScanResult } from './types.js';
import type { ActivityDeps } from '../activity-deps.js';
import type { DrawerLabels, EntityRegistryLabels } from './labels.js';
import type { GitWorkspace } from '../source/git-workspace.js';
import { resolveSource, withKeptCredential } from '../source/resolve.js';
import { readRootIdentity, recordedRootIdentity, sameRootIdentity } from '../source/root-identity.js';
import { stopIfAborted } from '../cancellation.js';
import { checkFence } from '../fence.js';

const NORMALIZE_VERSION = 2;
const MIN_CHUNK = 50;
const CONVO_EXTENSIONS: ReadonlySet<string> = new Set(CONVERSATION_EXTENSIONS);
const DOCUMENT_EXTENSION_SET: ReadonlySet<string> = new Set(Object.keys(DOCUMENT_EXTENSIONS));

/** Metadata shared by every drawer of one file. */
interface FileMeta {
  wing: string;
  source_file: string;
  added_by: string;
  filed_at: string;
  [key: string]: MetaValue | undefined;
}

interface PlannedFile {
  stored: string;
  state: FileState;
  drawers: Omit<DrawerWrite, 'embedding'>[];
}

function modeKey(spec: MineSpec): string {
  return spec.mode === 'projects' ? 'projects' : spec.mode === 'convos' ? spec.extract : 'format';
}

async function roomsFor(deps: ActivityDeps, jobId: string): Promise<RoomConfig[]> {
  return ((await deps.stores.jobs.getBlob(`${jobId}:rooms`)) as RoomConfig[] | undefined) ??
    [{ name: 'general', description: 'All project files', keywords: [] }];
}

/** What mining needs beyond the shared activity dependencies. */
export interface MineDeps extends ActivityDeps {
  labels: EntityRegistryLabels;
  git: GitWorkspace;
}

export async function scanSource(deps: MineDeps, input: { jobId: string; spec: MineSpec }, signal?: AbortSignal): Promise<ScanResult> {
  const { spec, jobId } = input;
  // A broken entity registry is refused here, before any drawer is written.
  deps.labels.current();
  const policy = sourcePolicy(deps.config, { carried: spec.sourceBounds });
  const src = await resolveSource(spec.source, { policy, workspace: deps.git, credentials: deps.stores.credentials, allowFile: spec.mode === 'convos' });
  const warnings: string[] = [];
  const stat = await fs.stat(src.root);
  const dir = stat.isFile() ? path.dirname(src.root) : src.root;
  // What filesystem this directory is, for sync to tell an unmounted or replaced root from deletions.
  const sourceRoot = spec.source.kind === 'dir' ? await readRootIdentity(dir) : undefined;
  let wing: string;
  if (spec.mode === 'projects' || spec.mode === 'extract') {
    // Rooms come from mempalace.yaml when present (extract mode too, docs/palace-behaviour.md §6), else `general`.
    const project = await loadProjectConfig(dir, spec.wing);
    wing = project.wing;
    warnings.push(...project.warnings);
    await deps.stores.jobs.putBlob(`${jobId}:rooms`, project.rooms);
  } else {
    wing = spec.wing ? validateName('wing', spec.wing) : (agentSessionsWing(dir) ?? wingSlug(path.basename(dir)));
  }
  const manifestId = `${jobId}:manifest`;
  const skips = { count: 0 };
  const entries: AsyncIterable<ManifestEntry> = stat.isFile()
    ? single({ relativePath: path.basename(src.root), absolutePath: src.root, size: stat.size, mtimeMs: stat.mtimeMs })
    : scannedFiles(src.root, spec, policy, skips, warnings);
  const totalFiles = await deps.stores.jobs.writeManifest(manifestId, pagesOf(entries, spec.limit > 0 ? spec.limit : Infinity, signal));
  if (skips.count > SKIP_WARNINGS) warnings.push(`... and ${skips.count - SKIP_WARNINGS} more skipped files`);
  const skippedAtScan = skips.count;
  return { manifestId, totalFiles, wing, sourceIdentity: src.identity, skippedAtScan, warnings, ...(src.commit ? { commit: src.commit } : {}),
    ...(sourceRoot ? { sourceRoot } : {}) };
}

/** Manifest entries per page written to the job store: a scan holds one page, whatever the source size. */
const MANIFEST_PAGE = 1_000;
/** Skipped files named one by one in the scan's warnings; the rest are counted. */
const SKIP_WARNINGS = 50;

async function* single(entry: ManifestEntry): AsyncGenerator<ManifestEntry> {
  yield entry;
}

/** The files of a directory source in path order, counting (and naming the first few) skips. */
async function* scannedFiles(root: string, spec: MineSpec, policy: SourcePolicy, skips: { count: number }, warnings: string[]): AsyncGenerator<ManifestEntry> {
  const options = spec.mode === 'projects'
    ? { respectGitignore: spec.respectGitignore, includeIgnored: spec.includeIgnored }
    : { respectGitignore: false, sniffText: false, extensions: spec.mode === 'convos' ? CONVO_EXTENSIONS : DOCUMENT_EXTENSION_SET,
      maxFileBytes: 500 * 1024 * 1024 };
  for await (const entry of scanProject(root, options)) {
    if (entry.kind === 'skip' && entry.skip.reason === 'symlink') {
      const link = await symlinkEntry(root, entry.skip, policy);
      if (link) yield link;
    } else if (entry.kind === 'skip') {
      if (skips.count++ < SKIP_WARNINGS) warnings.push(`SKIP: ${entry.skip.relativePath} (${entry.skip.reason}: ${entry.skip.detail})`);
    } else if (spec.mode !== 'convos' || isConversationFileName(path.basename(entry.file.relativePath))) {
      yield entry.file;
    }
  }
}

/** Up to `limit` entries in pages of MANIFEST_PAGE (a cancelled scan stops at the next entry). */
async function* pagesOf(entries: AsyncIterable<ManifestEntry>, limit: number, signal: AbortSignal | undefined): AsyncGenerator<ManifestEntry[]> {
  let page: ManifestEntry[] = [];
  let taken = 0;
  for await (const entry of entries) {
    stopIfAborted(signal);
    if (taken >= limit) break;
    taken++;
    page.push(entry);
    if (page.length === MANIFEST_PAGE) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/**
 * A symlink met by the scan is never followed; it goes into the manifest so the batch records why
 * in its file state (and drops drawers an earlier version of the path left).
 */
async function symlinkEntry(root: string, s: ScanSkip, policy: SourcePolicy): Promise<ManifestEntry | undefined> {
  const absolutePath = path.join(root, ...s.relativePath.split('/'));
  const link = await fs.lstat(absolutePath).catch(() => undefined);
  if (!link) return undefined;
  const target = await fs.realpath(absolutePath).catch(() => undefined);
  const outside = target !== undefined && !isWithin(root, target) && policy.bounds.length > 0 && !(await pathAllowed(target, policy));
  const skip = outside
    ? { reason: 'symlink_outside_roots', detail: 'a symbolic link to a target outside the allowed roots; not followed' }
    : { reason: 'symlink', detail: 'symlinks are not followed' };
  return { relativePath: s.relativePath, absolutePath, size: link.size, mtimeMs: link.mtimeMs, skip };
}

async function planProjectFile(deps: ActivityDeps, labels: DrawerLabels, spec: MineSpec, scan: ScanResult, entry: ManifestEntry, text: string,
  rooms: RoomConfig[], base: FileMeta): Promise<{ drawers: Omit<DrawerWrite, 'embedding'>[]; room: string } | { skip: string }> {
  const stripped = strip(text);
  if (codePointLength(stripped) < MIN_CHUNK) return { skip: 'too_short' };
  const room = detectRoom(entry.relativePath, stripped, rooms);
  const chunks = chunkText(stripped);
  const cap = deps.config.maxChunksPerFile > 0 ? deps.config.maxChunksPerFile : 50_000;
  if (chunks.length > cap) return { skip: 'chunk_cap' };
  const fileLabels = labels.forFile(entry, stripped);
  const drawers = chunks.map((c) => ({
    id: minedChunkId({ wing: scan.wing, room, sourceIdentity: scan.sourceIdentity, relativePath: entry.relativePath, chunkIndex: c.chunkIndex,
      mode: modeKey(spec) }),
    content: c.content,
    meta: { ...base, ...fileLabels, ...labels.forChunk(c.content, { entities: true }), room, chunk_index: c.chunkIndex, line_start: c.lineStart,
      line_end: c.lineEnd } satisfies DrawerMeta,
  }));
  return { drawers, room };
}

function planConversationFile(labels: DrawerLabels, spec: MineSpec, scan: ScanResult, entry: ManifestEntry, bytes: Uint8Array, base: FileMeta): {
  drawers: Omit<DrawerWrite, 'embedding'>[];
  room: string;
} | { skip: string } {
  const result = chunkConversation(bytes, path.basename(entry.relativePath), spec.extract);
  if (result.status === 'skipped') return { skip: `${result.reason}: ${result.message}` };
  const drawers = result.chunks.map((c) => ({
    id: minedChunkId({ wing: scan.wing, room: c.room, sourceIdentity: scan.sourceIdentity, relativePath: entry.relativePath, chunkIndex: c.chunkIndex,
      mode: modeKey(spec) }),
    content: c.content,
    meta: { ...base, ...labels.forChunk(c.content, { entities: false }), room: c.room, chunk_index: c.chunkIndex, ingest_mode: 'convos',
      extract_mode: spec.extract } satisfies DrawerMeta,
  }));
  return { drawers, room: result.chunks[0]!.room };
}

/** Count a file this job already filed, from the state it recorded then. */
function countFiledBefore(result: BatchResult, entry: ManifestEntry, previous: FileState): void {
  const skip = previous.extra?.skip_reason;
  if (typeof skip === 'string') {
    result.files_skipped++;
    result.skipsDetail.push({ file: entry.relativePath, reason: skip });
    return;
  }
  const room = String(previous.extra?.room ?? 'general');
  result.files_mined++;
  result.drawers_written += previous.drawer_count;
  result.byRoom[room] = (result.byRoom[room] ?? 0) + 1;
}

export async function mineBatch(deps: MineDeps, input: BatchInput, signal?: AbortSignal): Promise<BatchResult> {
  const { source } = input.spec;
  if (source.kind !== 'git') return mineBatchAt(deps, input, signal);
  if (!input.scan.commit) throw new PalaceError('internal', `the scan of ${source.url} recorded no commit`);
  // This worker's checkout of the scanned commit (made on its first batch here, then reused); the
  // manifest's absolute paths are those of the worker that scanned.
  const target = await withKeptCredential(await resolveGitSource('source', source.url, sourcePolicy(deps.config, { carried: input.spec.sourceBounds })),
    deps.stores.credentials);
  return deps.git.withCheckout(target, input.scan.commit, (c) => mineBatchAt(deps, input, signal, c.dir));
}

async function mineBatchAt(deps: MineDeps, input: BatchInput, signal: AbortSignal | undefined, checkout?: string): Promise<BatchResult> {
  const { spec, scan } = input;
  const labels = deps.labels.current();
  const result: BatchResult = { ...emptyCounters(), errorsDetail: [], skipsDetail: [], byRoom: {} };
  const listed = await deps.stores.jobs.readManifest(scan.manifestId, input.offset, input.count);
  const entries = checkout === undefined ? listed : listed.map((e) => ({ ...e, absolutePath: path.join(checkout, e.relativePath) }));
  if (listed.length !== input.count)
    throw new PalaceError('internal', `manifest ${scan.manifestId} has ${listed.length} entries at ${input.offset}, expected ${input.count}`);
  const storedOf = (e: ManifestEntry) => (spec.source.kind === 'git' ? `${spec.source.url}:${e.relativePath}` : e.absolutePath);
  const states = await deps.stores.drawers.fileStates(scan.wing, entries.map(storedOf));
  const rooms = spec.mode === 'convos' ? [] : await roomsFor(deps, input.jobId);
  const planned: PlannedFile[] = [];
  const rootExtra = scan.sourceRoot ? { ...scan.sourceRoot } : {};
  // Unchanged files whose state predates the root's recorded identity (or names another): restamped, drawers untouched.
  const restamped: FileState[] = [];
  const restamp = (previous: FileState) => {
    if (scan.sourceRoot && !sameRootIdentity(recordedRootIdentity(previous), scan.sourceRoot))
      restamped.push({ ...previous, extra: { ...previous.extra, ...rootExtra } });
  };

  for (const entry of entries) {
    stopIfAborted(signal);
    result.files_seen++;
    result.lastFile = entry.relativePath;
    const stored = storedOf(entry);
    const previous = states.get(stored);
    const refuse = (reason: string, detail: string, size: number) => {
      result.files_skipped++;
      result.skipsDetail.push({ file: entry.relativePath, reason: `${reason}: ${detail}` });
      if (spec.dryRun) return;
      // A refused path's state never counts as unchanged (see below), so whatever later stands there is read and checked afresh.
      const state: FileState = { wing: scan.wing, source_file: stored, size, mtime_ms: 0, content_sha256: '', drawer_count: 0, mined_at: filedAtNow(),
        extra: { mode: modeKey(spec), skip_reason: reason, ...rootExtra } };
      planned.push({ stored, state, drawers: [] });
    };
    try {
      if (entry.skip) {
        refuse(entry.skip.reason, entry.skip.detail, entry.size);
        continue;
      }
      const st = await fs.lstat(entry.absolutePath);
      if (previous && previous.extra?.skip_reason === undefined && st.isFile() && previous.size === st.size && previous.mtime_ms === st.mtimeMs) {
        // Filed by this same job: a batch retried after its attempt wrote and then died (worker
        // crash). It counts as it did the first time, so progress stays exact.
        if (previous.extra?.job === input.jobId) countFiledBefore(result, entry, previous);
        else result.files_skipped++;
        restamp(previous);
        continue;
      }
      let read;
      try {
        read = await readListedFile(entry.absolutePath);
      } catch (e) {
        if (!(e instanceof ListedFileRefused)) throw e;
        refuse(e.reason, e.message, st.size);
        continue;
      }
      const bytes = read.bytes;
      const sha = sha256Hex(bytes);
      const filedAt = filedAtNow();
      const state: FileState = { wing: scan.wing, source_file: stored, size: read.size, mtime_ms: read.mtimeMs, content_sha256: sha, drawer_count: 0,
        mined_at: filedAt, extra: { mode: modeKey(spec), job: input.jobId, ...(scan.commit ? { commit: scan.commit } : {}), ...rootExtra } };
      if (previous && previous.content_sha256 === sha && previous.extra?.mode === modeKey(spec)) {
        // Touched but unchanged: the drawers stand; the next mine re-hashes it again (no embedding).
        result.files_skipped++;
        restamp(previous);
        continue;
      }
      const base: FileMeta = {
        wing: scan.wing,
        source_file: stored,
        added_by: spec.agent,
        filed_at: filedAt,
        id_recipe: ID_RECIPE,
        normalize_version: NORMALIZE_VERSION,
        source_mtime: read.mtimeMs / 1000,
        ...(scan.commit ? { source_commit: scan.commit } : {}),
      };
      let plan: { drawers: Omit<DrawerWrite, 'embedding'>[]; room: string } | { skip: string };
      if (spec.mode === 'convos') plan = planConversationFile(labels, spec, scan, entry, bytes, base);
      else if (spec.mode === 'extract') {
        const extracted = await tryExtractDocument(bytes, entry.relativePath);
        plan = extracted.status === 'OK'
          ? await planProjectFile(deps, labels, spec, scan, entry, extracted.document.text, rooms, { ...base, ingest_mode: 'extract', extract_mode: 'format' })
          : { skip: `${extracted.status}: ${extracted.message}` };
      } else {
        const decoded = decodeUtf8File(bytes);
        plan = decoded.ok
          ? await planProjectFile(deps, labels, spec, scan, entry, decoded.text, rooms, base)
          : { skip: `${decoded.reason}: ${decoded.detail}` };
      }
      if ('skip' in plan) {
        result.files_skipped++;
        result.skipsDetail.push({ file: entry.relativePath, reason: plan.skip });
        // Record the skip (and drop drawers of an older version of this file).
        if (!spec.dryRun) planned.push({ stored, state: { ...state, extra: { ...state.extra, skip_reason: plan.skip } }, drawers: [] });
        continue;
      }
      state.drawer_count = plan.drawers.length;
      state.extra = { ...state.extra, room: plan.room };
      planned.push({ stored, state, drawers: plan.drawers });
      result.files_mined++;
      result.byRoom[plan.room] = (result.byRoom[plan.room] ?? 0) + 1;
      result.drawers_written += plan.drawers.length;
    } catch (e) {
      result.errors++;
      result.errorsDetail.push({ file: entry.relativePath, error: e instanceof Error ? e.message : String(e) });
    }
  }
  if (spec.dryRun) return result;

  const texts = planned.flatMap((p) => p.drawers.map((d) => d.content));
  const vectors = await deps.embedder.embed(texts, { signal });
  stopIfAborted(signal);
  if (input.fence) await checkFence(deps.stores.locks, input.fence);
  let v = 0;
  const files = planned.map((p) => ({ sourceFile: p.stored, drawers: p.drawers.map((d): DrawerWrite => ({ ...d, embedding: vectors[v++]! })),
    state: p.state })
  );
  await deps.stores.drawers.replaceFiles(scan.wing, files);
  if (restamped.length > 0) await deps.stores.drawers.putFileStates(restamped);
  return result;
}
