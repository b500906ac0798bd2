/**
 * Registered sources as a caller with wing grants sees them: a source is visible when its wing
 * is readable (one without a wing mines a wing derived on the worker, so it is hidden), and
 * adding, replacing, removing or refreshing one needs write on its wing.
 */
import type { RegisteredSource, RegisteredSources } from '../../stores/ports/registered-sources.js';
import type { RefreshScheduler } from '../../stores/ports/refresh-scheduler.js';
import type { WingView } from './wing-view.js';
import { withOverrides } from './with-overrides.js';

function visibleTo(view: WingView, s: RegisteredSource): boolean {
  return s.wing !== undefined && view.readable(s.wing);
}

function assertSourceWritable(view: WingView, s: RegisteredSource, what: string): void {
  view.assertWritable(view.requireWing(s.wing, 'a registered source'), what);
}

export function grantedSources(inner: RegisteredSources, view: WingView): RegisteredSources {
  const shown = async (id: string) => {
    const s = await inner.get(id);
    return s && visibleTo(view, s) ? s : undefined;
  };
  return withOverrides(inner, {
    async put(source) {
      assertSourceWritable(view, source, 'register a source');
      const before = await inner.get(source.source_id);
      if (before) assertSourceWritable(view, before, 'replace a source');
      return inner.put(source);
    },
    get: shown,
    async list() {
      return (await inner.list()).filter((s) => visibleTo(view, s));
    },
    async remove(id) {
      const s = await shown(id);
      if (!s) return false;
      assertSourceWritable(view, s, 'remove a source');
      return inner.remove(id);
    },
    async setRefresh(id, refresh) {
      const s = await shown(id);
      if (!s) return false;
      assertSourceWritable(view, s, 'refresh a source');
      return inner.setRefresh(id, refresh);
    },
  });
}

/** Refresh requests of a source the caller may write only. */
export function grantedRefresh(inner: RefreshScheduler, view: WingView): RefreshScheduler {
  return withOverrides(inner, {
    async request(source) {
      assertSourceWritable(view, source, 'refresh a source');
      return inner.request(source);
    },
  });
}
