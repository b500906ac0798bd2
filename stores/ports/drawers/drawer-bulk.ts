/**
 * The bulk drawer port: every row with its embedding, for backup, migration and re-embedding.
 * Implemented by `embedded/drawers/` and `opensearch/`.
 */
import type { DrawerWrite } from '../../../core/drawer.js';

export interface DrawerBulk {
  /**
   * Backup and migration: up to `limit` rows with their embeddings, every row once, ordered by
   * id ascending (byte order of the UTF-8 text), starting after the row id `after`.
   */
  scanRows(after: string | undefined, limit: number): Promise<DrawerWrite[]>;
  /**
   * Replaces the embedding of stored rows by id, leaving their content, metadata and ids as
   * they are; ids not stored are ignored. Returns the number of rows changed.
   */
  replaceEmbeddings(vectors: Map<string, Float32Array>): Promise<number>;
  /**
   * Makes the store take vectors of `dimension` numbers from now on, in every process that has it
   * open. When it took another length, every stored vector is dropped (rows keep their content
   * and metadata, and are found by vector again once `replaceEmbeddings` gives them one); when it
   * already takes that length, nothing changes. For `mempalace reembed` to an encoder set of
   * another length, and an empty palace's first model.
   */
  resetEmbeddings(dimension: number): Promise<void>;
}
