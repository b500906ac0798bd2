/**
 * Per-drawer labels computed while mining (docs/palace-behaviour.md §4.7–4.8): the content date once per
 * file, the hall and the entities per chunk. Entities feed the wing's hallways. Entity detection
 * knows the names of the entity registry (`known_entities.json`, docs/palace-behaviour.md §7.2), re-read when its mtime
 * changes, so names confirmed while a long mine runs apply to the batches after.
 */
import fs from 'node:fs';
import { contentDate } from '../../core/content-date.js';
import type { MetaValue } from '../../core/drawer.js';
import { compileEntityDetector, registryNames } from '../../core/entities.js';
import { detectHall } from '../../core/halls.js';
import type { ManifestEntry } from '../../stores/ports/job-store.js';
import { readEntityRegistry } from '../../palace/sources/entity-registry.js';

type Detector = (text: string) => string[];

export interface DrawerLabels {
  forFile(entry: ManifestEntry, text: string): Record<string, MetaValue>;
  /** Hall of every chunk; entities only for project files (conversation drawers get none, docs/palace-behaviour.md §4.8). */
  forChunk(text: string, opts: { entities: boolean }): Record<string, MetaValue>;
}

export class EntityRegistryLabels {
  private cached: { mtimeMs: number; detect: Detector } | undefined;
  private readonly plain: Detector;

  constructor(private readonly registryFile: string, private readonly languages: readonly string[]) {
    this.plain = compileEntityDetector({ languages });
  }

  /**
   * The labels for the registry as it is now. A missing file means no registry names; a file
   * that is not a valid registry is refused (invalid_argument naming the file and the rule)
   * rather than mining without the names the user listed.
   */
  current(): DrawerLabels {
    const detect = this.detector();
    return {
      forFile(entry, text): Record<string, MetaValue> {
        const date = contentDate({ fileName: entry.relativePath, text, mtimeMs: entry.mtimeMs, mtimeZone: 'utc' });
        return date ? { content_date: date } : {};
      },
      forChunk(text, opts) {
        const entities = opts.entities ? detect(text) : [];
        return { hall: detectHall(text), ...(entities.length > 0 ? { entities: entities.join(';') } : {}) };
      },
    };
  }

  private detector(): Detector {
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(this.registryFile).mtimeMs;
    } catch {
      this.cached = undefined;
      return this.plain;
    }
    if (this.cached?.mtimeMs === mtimeMs) return this.cached.detect;
    const registry = readEntityRegistry(this.registryFile) ?? {};
    const detect = compileEntityDetector({ knownNames: registryNames(registry), languages: this.languages });
    this.cached = { mtimeMs, detect };
    return detect;
  }
}
