/**
 * Package discovery for the stale-library gate and the server's version: this package's own
 * package.json, and the packages watched by default.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { WatchedPackage } from './guards.js';

/** This package's package.json: the first one named "mempalace" above this module. */
export function ownPackageJson(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    try {
      if ((JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: unknown }).name === 'mempalace') return candidate;
    } catch {
      // Not here; keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
    dir = parent;
  }
}

/** This package, plus better-sqlite3 in the embedded profile (its native module is loaded once). */
export function defaultWatched(profile: string): WatchedPackage[] {
  const watched: WatchedPackage[] = [{ name: 'mempalace', packageJson: ownPackageJson() }];
  if (profile === 'embedded') {
    try {
      watched.push({ name: 'better-sqlite3', packageJson: createRequire(import.meta.url).resolve('better-sqlite3/package.json') });
    } catch {
      // Not resolvable: the gate reports it under `unreadable` through a missing baseline.
      watched.push({ name: 'better-sqlite3', packageJson: path.join('node_modules', 'better-sqlite3', 'package.json') });
    }
  }
  return watched;
}
