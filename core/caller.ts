import type { WingGrants } from './wing-grants.js';

/** An authenticated HTTP caller (docs/decisions.md "Identity"); absent over stdio. */
export interface Caller {
  identity: string;
  scopes: string[];
  /** The token's source roots (canonical directories); absent = the server's roots alone. */
  roots?: string[] | undefined;
  /**
   * The token's per-wing grants (core/wing-grants.ts); absent = every wing, as the scopes allow.
   * An `admin` caller has none: it sees and writes every wing.
   */
  wings?: WingGrants | undefined;
}
