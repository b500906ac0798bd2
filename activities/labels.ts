/**
 * Per-drawer labels computed while mining (palace-behaviour §4.7–4.8): the content date once per
 * file, the hall and the entities per chunk. Entities feed the wing's hallways.
 */
import { contentDate } from '../core/content-date.js';
import type { MetaValue } from '../core/drawer.js';
import { compileEntityDetector } from '../core/entities.js';
import { detectHall } from '../core/halls.js';
import type { ManifestEntry } from '../stores/ports.js';

const detectEntities = compileEntityDetector();

export const drawerLabels = {
  forFile(entry: ManifestEntry, text: string): Record<string, MetaValue> {
    const date = contentDate({ fileName: entry.relativePath, text, mtimeMs: entry.mtimeMs, mtimeZone: 'utc' });
    return date ? { content_date: date } : {};
  },
  forChunk(text: string): Record<string, MetaValue> {
    const entities = detectEntities(text);
    return { hall: detectHall(text), ...(entities.length > 0 ? { entities: entities.join(';') } : {}) };
  },
};
