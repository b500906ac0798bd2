/**
 * The part of a drawer store adapter that hands the file state, model record and bulk ports to
 * the objects implementing them, so that one adapter object serves all four drawer ports while
 * each concern keeps its own file.
 */
import type { DrawerWrite } from '../../../core/drawer.js';
import type { DrawerBulk } from '../../ports/drawers/drawer-bulk.js';
import type { FileReplacement, FileState, FileStateStore } from '../../ports/drawers/file-states.js';
import type { PalaceModelRecord, PalaceModelStore } from '../../ports/drawers/palace-model.js';

export abstract class ComposedDrawerStore implements FileStateStore, PalaceModelStore, DrawerBulk {
  protected constructor(
    private readonly files: FileStateStore,
    private readonly model: PalaceModelStore,
    private readonly bulk: DrawerBulk,
  ) {}

  replaceFile(wing: string, sourceFile: string, drawers: DrawerWrite[], state: FileState): Promise<void> {
    return this.files.replaceFile(wing, sourceFile, drawers, state);
  }

  replaceFiles(wing: string, files: FileReplacement[]): Promise<void> {
    return this.files.replaceFiles(wing, files);
  }

  fileStates(wing: string, sourceFiles: string[]): Promise<Map<string, FileState>> {
    return this.files.fileStates(wing, sourceFiles);
  }

  listFileStates(wing: string | undefined, after: string | undefined, limit: number): Promise<{ items: FileState[]; next?: string }> {
    return this.files.listFileStates(wing, after, limit);
  }

  deleteFileStates(wing: string, sourceFiles: string[]): Promise<number> {
    return this.files.deleteFileStates(wing, sourceFiles);
  }

  putFileStates(states: FileState[]): Promise<void> {
    return this.files.putFileStates(states);
  }

  readModel(): Promise<PalaceModelRecord | undefined> {
    return this.model.readModel();
  }

  writeModel(next: PalaceModelRecord, expected: PalaceModelRecord | undefined): Promise<boolean> {
    return this.model.writeModel(next, expected);
  }

  scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]> {
    return this.bulk.scanRows(after, limit);
  }

  replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number> {
    return this.bulk.replaceEmbeddings(vectors);
  }

  resetEmbeddings(dimension: number): Promise<void> {
    return this.bulk.resetEmbeddings(dimension);
  }
}
