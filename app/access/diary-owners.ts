/**
 * Diaries belong to their agent (issue 28, ownership): a caller that is not admin may change or
 * delete a diary entry (`type: diary_entry`) only when it is that entry's agent, whatever its
 * wing grants. Refused before anything is written.
 */
import type { Drawer } from '../../core/drawer.js';
import { PalaceError } from '../../core/errors.js';
import { sameAgent } from '../../core/agent-identity.js';
import type { DrawerStore } from '../../stores/ports/palace-stores.js';
import { withOverrides } from './with-overrides.js';

function assertOwnDiary(identity: string, rows: readonly Drawer[], what: string): void {
  for (const d of rows) {
    const agent = d.meta.agent;
    if (d.meta.type !== 'diary_entry' || typeof agent !== 'string' || sameAgent(agent, identity)) continue;
    throw new PalaceError('permission_denied', `a diary entry of agent '${agent}' can be changed by that agent or an admin only (${what})`, {
      field: 'agent_name',
      rule: 'diary_owner',
    });
  }
}

export function diaryOwnedDrawers(inner: DrawerStore, identity: string): DrawerStore {
  return withOverrides(inner, {
    async upsert(drawers) {
      assertOwnDiary(identity, drawers, 'write');
      assertOwnDiary(identity, await inner.get(drawers.map((d) => d.id)), 'overwrite');
      return inner.upsert(drawers);
    },
    async delete(ids) {
      assertOwnDiary(identity, await inner.get(ids), 'delete');
      return inner.delete(ids);
    },
  });
}
