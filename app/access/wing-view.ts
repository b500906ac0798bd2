/**
 * What one caller's wing grants (core/wing-grants.ts) let it see and change, asked of the
 * unwrapped stores: the wings that exist, which of them it may read, and the refusal of a write.
 */
import { PalaceError } from '../../core/errors.js';
import type { WingGrants } from '../../core/wing-grants.js';
import { mayRead, mayWrite } from '../../core/wing-grants.js';
import type { DrawerFilter, DrawerIndex } from '../../stores/ports/drawers/drawer-index.js';

export class WingView {
  constructor(readonly identity: string, readonly grants: WingGrants, private readonly drawers: DrawerIndex) {}

  readable(wing: string): boolean {
    return mayRead(this.grants, wing);
  }

  writable(wing: string): boolean {
    return mayWrite(this.grants, wing);
  }

  /**
   * The filters that cover what `filter` matches in readable wings only: the filter itself when
   * every wing holding matches is readable (one query, as without grants), one per readable wing
   * otherwise, none when it names a hidden wing.
   */
  async narrowed(filter: DrawerFilter = {}): Promise<DrawerFilter[]> {
    if (filter.wing !== undefined) return this.readable(filter.wing) ? [filter] : [];
    const wings = await this.wingsHolding(filter);
    const readable = wings.filter((w) => this.readable(w));
    if (readable.length === wings.length) return [filter];
    return readable.map((wing) => ({ ...filter, wing }));
  }

  /** The wing of each stored drawer among `ids` (hidden ones included), for write checks. */
  async wingsOf(ids: readonly string[]): Promise<Map<string, string>> {
    if (ids.length === 0) return new Map();
    return new Map((await this.drawers.get([...ids])).map((d) => [d.id, d.meta.wing]));
  }

  /** The wings holding drawers that match `filter`, hidden ones included, for write checks. */
  async wingsHolding(filter: DrawerFilter): Promise<string[]> {
    return [...new Set((await this.drawers.taxonomy(filter)).map((r) => r.wing))];
  }

  /**
   * Refuses a change to a wing this caller may not write; nothing has been written yet. A wing
   * it cannot read is not named, so a refusal does not tell which hidden wing holds something.
   */
  assertWritable(wing: string, what: string): void {
    if (this.writable(wing)) return;
    const named = this.readable(wing);
    throw new PalaceError('permission_denied', `agent '${this.identity}' has no write grant on ${named ? `wing '${wing}'` : 'a wing it cannot see'} (${what})`,
      {
        field: 'wing',
        rule: 'wing_grant',
        ...(named ? { details: { wing } } : {}),
      });
  }

  /** Refuses what needs every wing (re-embedding, restoring records of no wing) for a caller with grants. */
  refuseWhole(what: string): never {
    throw new PalaceError('permission_denied', `agent '${this.identity}' has wing grants; ${what} acts on every wing and needs a token without them`, {
      field: 'wings',
      rule: 'all_wings',
    });
  }

  /** Refuses a request that would pick its wing itself (a mine of a derived wing, a sync of a project directory). */
  requireWing(wing: string | undefined, what: string): string {
    if (wing !== undefined && wing !== '') return wing;
    throw new PalaceError('invalid_argument', `agent '${this.identity}' has wing grants: ${what} must name its wing`, {
      field: 'wing',
      rule: 'wing_required_with_grants',
    });
  }
}
