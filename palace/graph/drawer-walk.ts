/**
 * The metadata of every drawer matching a filter, page by page in id order (the index's
 * `scanMetadata`), for scans that aggregate a whole wing or palace (hallways, room-graph facets).
 * Between pages the walk yields to the event loop: an embedded store answers synchronously, and
 * a large palace would otherwise hold timers (a worker's heartbeats, lease renewals) and requests
 * for the whole walk.
 */
import type { DrawerFilter, DrawerIndex, DrawerMetadataRow } from '../../stores/ports/drawers/drawer-index.js';

const WALK_PAGE = 5000;

export async function* drawerMetadataPages(drawers: Pick<DrawerIndex, 'scanMetadata'>, filter: DrawerFilter): AsyncGenerator<DrawerMetadataRow[]> {
  for (let after: string | undefined;;) {
    const page = await drawers.scanMetadata(filter, after, WALK_PAGE);
    if (page.length > 0) yield page;
    if (page.length < WALK_PAGE) return;
    after = page[page.length - 1]!.id;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
