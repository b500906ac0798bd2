/**
 * Mining's file states on OpenSearch: documents of the palace's file-states index
 * (file-state-documents.ts), written after the file's drawers so a retry converges.
 */
import type { DrawerWrite } from '../../core/drawer.js';
import type { FileReplacement, FileState, FileStateStore } from '../ports/drawers/file-states.js';
import { decodeCursor, encodeCursor, pageWithCursor } from '../shared/drawers/cursor.js';
import { checkFileReplacements, checkFileState, checkInt, checkNonEmpty, checkStrings } from '../shared/drawers/port-args.js';
import { PAGE_MAX, type OpenSearchDrawerIndices } from './drawer-indices.js';
import { fileStateId, fromFileStateSource, toFileStateDocument } from './file-state-documents.js';
import type { FileStateDocument } from './file-state-documents.js';

/** Files per `_delete_by_query` of a replaceFiles batch: well under the engine's 1 024-clause limit. */
const DELETE_FILES_PER_QUERY = 256;

export class OpenSearchFileStates implements FileStateStore {
  constructor(private readonly base: OpenSearchDrawerIndices) {}

  async replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void> {
    return this.replaceFiles(wing, [{ sourceFile, drawers, state }]);
  }

  /**
   * New rows first, then the files' other rows deleted, then the states: a crash in between
   * leaves extra rows or an old state, never a file without its rows, and a retry converges.
   * Nothing refreshes until the end, where one refresh (unless the policy is `false`) makes the
   * whole batch visible at once: per-file refreshes made one segment per file.
   */
  async replaceFiles(wing: string, files: FileReplacement[]): Promise<void> {
    const drawers = checkFileReplacements(wing, files, this.base.dimension);
    if (files.length === 0) return;
    if (drawers.length > 0) await this.base.bulk(this.base.drawers, this.base.indexOps(drawers), false);
    for (let i = 0; i < files.length; i += DELETE_FILES_PER_QUERY) {
      const group = files.slice(i, i + DELETE_FILES_PER_QUERY).map((f) => ({
        bool: { filter: [{ term: { source_file: f.sourceFile } }], must_not: f.drawers.length > 0 ? [{ terms: { id: f.drawers.map((d) => d.id) } }] : [] },
      }));
      await this.base.deleteByQuery(this.base.drawers, { bool: { filter: [{ term: { wing } }], should: group, minimum_should_match: 1 } }, false);
    }
    await this.base.bulk(this.base.states,
      files.map((f) => ({ action: { index: { _id: fileStateId(wing, f.sourceFile) } }, doc: toFileStateDocument(f.state) })), false);
    if (this.base.refreshPolicy !== false) await this.base.refresh();
  }

  async fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>> {
    checkNonEmpty('wing', wing);
    checkStrings('sourceFiles', sourceFiles);
    const out = new Map<string, FileState>();
    if (sourceFiles.length === 0) return out;
    const res = await this.base.call<{ docs: { found: boolean; _source?: FileStateDocument }[] }>((c) =>
      c.mget({ index: this.base.states, body: { ids: [...new Set(sourceFiles)].map((f) => fileStateId(wing, f)) } })
    );
    for (const d of res.docs) if (d.found && d._source) out.set(d._source.source_file, fromFileStateSource(d._source));
    return out;
  }

  async listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }> {
    if (wing !== undefined) checkNonEmpty('wing', wing);
    checkInt('limit', limit, 1, PAGE_MAX);
    const resume = after === undefined ? undefined : decodeCursor('after', after);
    const res = await this.base.search<FileStateDocument>(this.base.states, {
      size: limit + 1,
      query: wing === undefined ? { match_all: {} } : { bool: { filter: [{ term: { wing } }] } },
      sort: [{ wing: 'asc' }, { source_file: 'asc' }],
      ...(resume ? { search_after: resume } : {}),
    });
    return pageWithCursor(res.hits.hits.map((h) => fromFileStateSource(h._source!)), limit, (s) => encodeCursor(s.wing, s.source_file));
  }

  async deleteFileStates(wing: string, sourceFiles: string[]): Promise<number> {
    checkNonEmpty('wing', wing);
    checkStrings('sourceFiles', sourceFiles);
    if (sourceFiles.length === 0) return 0;
    const ids = [...new Set(sourceFiles.map((f) => fileStateId(wing, f)))];
    const items = await this.base.bulk(this.base.states, ids.map((id) => ({ action: { delete: { _id: id } } })));
    return items.filter((i) => i.result === 'deleted').length;
  }

  async putFileStates(states: FileState[]): Promise<void> {
    for (const s of states) checkFileState(s);
    if (states.length === 0) return;
    await this.base.bulk(this.base.states,
      states.map((s) => ({ action: { index: { _id: fileStateId(s.wing, s.source_file) } }, doc: toFileStateDocument(s) })));
  }
}
