/**
 * The drawer store as a caller with wing grants sees it: reads return rows of readable wings
 * only, counts and taxonomy count those alone, and writes to a wing it may not write are
 * refused before the store is touched. Filters are pushed down per readable wing
 * (WingView.narrowed), so the adapters need no new query; the results are merged here in the
 * order the port promises.
 */
import type { Drawer, DrawerWrite } from '../../core/drawer.js';
import { logicalDrawerId } from '../../core/drawer.js';
import type { DrawerFilter, DrawerMetadataRow, DrawerPage, PoolRequest, VectorHit } from '../../stores/ports/drawers/drawer-index.js';
import { poolOfParts } from '../../stores/shared/drawers/pool-of-parts.js';
import type { PoolParts } from '../../stores/shared/drawers/pool-of-parts.js';
import type { FileReplacement, FileState } from '../../stores/ports/drawers/file-states.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import type { WingView } from './wing-view.js';
import { withOverrides } from './with-overrides.js';

function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Round-robin over per-wing candidate lists, so every wing's best candidates make the cut. */
function interleave(lists: Drawer[][], k: number): Drawer[] {
  const out: Drawer[] = [];
  for (let i = 0; out.length < k && lists.some((l) => i < l.length); i++) {
    for (const l of lists) if (i < l.length && out.length < k) out.push(l[i]!);
  }
  return out;
}

function pageOfGroups(rows: Drawer[], offset: number, limit: number): Drawer[] {
  const sorted = [...rows].sort((a, b) =>
    byteOrder(logicalDrawerId(a), logicalDrawerId(b)) || a.meta.chunk_index - b.meta.chunk_index || byteOrder(a.id, b.id)
  );
  const groups: string[] = [];
  for (const d of sorted) if (groups[groups.length - 1] !== logicalDrawerId(d)) groups.push(logicalDrawerId(d));
  const page = new Set(groups.slice(offset, offset + limit));
  return sorted.filter((d) => page.has(logicalDrawerId(d)));
}

export function grantedDrawers(inner: DrawerStore, view: WingView): DrawerStore {
  const visible = <T extends { meta: { wing: string } }>(rows: T[]): T[] => rows.filter((r) => view.readable(r.meta.wing));

  /** Refuses writes to `wings`, and to the wings of the stored rows they would replace or delete. */
  const assertWrites = async (wings: Iterable<string>, ids: readonly string[], what: string) => {
    for (const wing of wings) view.assertWritable(wing, what);
    for (const wing of (await view.wingsOf(ids)).values()) view.assertWritable(wing, what);
  };

  const overrides: Partial<DrawerStore> = {
    async upsert(drawers: DrawerWrite[]) {
      await assertWrites(drawers.map((d) => d.meta.wing), drawers.map((d) => d.id), 'write drawers');
      return inner.upsert(drawers);
    },
    async get(ids: string[]) {
      return visible(await inner.get(ids));
    },
    async embeddings(ids: string[]) {
      return inner.embeddings((await overrides.get!(ids)).map((d) => d.id));
    },
    async delete(ids: string[]) {
      // Rows of hidden wings are left alone as if absent; rows of read-only wings refuse the call.
      const wings = await view.wingsOf(ids);
      const shown = ids.filter((id) => wings.has(id) && view.readable(wings.get(id)!));
      for (const id of shown) view.assertWritable(wings.get(id)!, 'delete drawers');
      return shown.length === 0 ? 0 : inner.delete(shown);
    },
    async deleteWhere(filter: DrawerFilter) {
      const wings = filter.wing !== undefined ? [filter.wing] : (await inner.taxonomy(filter)).map((r) => r.wing);
      for (const wing of wings) view.assertWritable(wing, 'delete drawers');
      return inner.deleteWhere(filter);
    },
    async knn(vector: Float32Array, k: number, filter?: DrawerFilter) {
      const per = await Promise.all((await view.narrowed(filter)).map((f) => inner.knn(vector, k, f)));
      return per.flat().filter((h: VectorHit) => view.readable(h.drawer.meta.wing)).sort((a, b) => a.distance - b.distance).slice(0, k);
    },
    async lexical(tokens: string[], k: number, filter?: DrawerFilter) {
      const per = await Promise.all((await view.narrowed(filter)).map((f) => inner.lexical(tokens, k, f)));
      return interleave(per.map(visible), k);
    },
    // Composed of the narrowed calls above, so no row of a hidden wing joins the pool.
    async candidatePool(request: PoolRequest) {
      return poolOfParts(overrides as PoolParts, request);
    },
    async list(filter: DrawerFilter, offset: number, limit: number): Promise<DrawerPage> {
      const filters = await view.narrowed(filter);
      if (filters.length === 1) {
        const page = await inner.list(filters[0]!, offset, limit);
        return { items: visible(page.items), total: page.total };
      }
      const pages = await Promise.all(filters.map((f) => inner.list(f, 0, offset + limit)));
      return { items: pageOfGroups(visible(pages.flatMap((p) => p.items)), offset, limit), total: pages.reduce((n, p) => n + p.total, 0) };
    },
    async scanMetadata(filter: DrawerFilter, after: string | undefined, limit: number): Promise<DrawerMetadataRow[]> {
      const per = await Promise.all((await view.narrowed(filter)).map((f) => inner.scanMetadata(f, after, limit)));
      return visible(per.flat()).sort((a, b) => byteOrder(a.id, b.id)).slice(0, limit);
    },
    async count(filter?: DrawerFilter) {
      const counts = await Promise.all((await view.narrowed(filter)).map((f) => inner.count(f)));
      return counts.reduce((n, c) => n + c, 0);
    },
    async taxonomy(filter?: DrawerFilter) {
      return (await inner.taxonomy(filter)).filter((r) => view.readable(r.wing));
    },
    async sources(filter: DrawerFilter, after: string | undefined, limit: number) {
      if (filter.wing !== undefined && !view.readable(filter.wing)) return { items: [] };
      const page = await inner.sources(filter, after, limit);
      return { ...page, items: page.items.filter((s) => view.readable(s.wing)) };
    },
    async scanRows(after: string | undefined, limit: number) {
      return visible(await inner.scanRows(after, limit));
    },
    replaceEmbeddings() {
      return view.refuseWhole('replacing embeddings');
    },
    resetEmbeddings() {
      return view.refuseWhole('resetting embeddings');
    },
    writeModel() {
      return view.refuseWhole("changing the palace's model record");
    },
    async replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState) {
      await assertWrites([wing, ...drawers.map((d) => d.meta.wing)], drawers.map((d) => d.id), 'write drawers');
      return inner.replaceFile(wing, sourceFile, drawers, state);
    },
    async replaceFiles(wing: string, files: FileReplacement[]) {
      const drawers = files.flatMap((f) => f.drawers);
      await assertWrites([wing, ...drawers.map((d) => d.meta.wing)], drawers.map((d) => d.id), 'write drawers');
      return inner.replaceFiles(wing, files);
    },
    async fileStates(wing: string, sourceFiles: string[]) {
      return view.readable(wing) ? inner.fileStates(wing, sourceFiles) : new Map<string, FileState>();
    },
    async listFileStates(wing: string | undefined, after: string | undefined, limit: number) {
      if (wing !== undefined && !view.readable(wing)) return { items: [] };
      const page = await inner.listFileStates(wing, after, limit);
      return { ...page, items: page.items.filter((s) => view.readable(s.wing)) };
    },
    async deleteFileStates(wing: string, sourceFiles: string[]) {
      view.assertWritable(wing, 'delete file states');
      return inner.deleteFileStates(wing, sourceFiles);
    },
    async putFileStates(states: FileState[]) {
      for (const s of states) view.assertWritable(s.wing, 'restore file states');
      return inner.putFileStates(states);
    },
  };
  return withOverrides(inner, overrides);
}
