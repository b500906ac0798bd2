/**
 * What a palace operation needs: its configuration and the ports, chosen by the composition
 * root (stores/open.ts, app/). Operations never import an adapter.
 */
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { DrawerIndex } from '../stores/ports/drawers/drawer-index.js';

export interface DrawerContext {
  config: Config;
  drawers: DrawerIndex;
  embedder: Embedder;
  /** Injectable clock so tests can pin `filed_at`. */
  now?: () => Date;
  /**
   * Who makes this call (the token's identity, or MEMPALACE_AGENT for the local user), set by the
   * runtime a call sees (app/call-runtime.ts); a change to a drawer records it as `updated_by`.
   */
  actor?: string;
}

export const CHUNK_SIZE = 800;

export function nowOf(ctx: { now?: () => Date }): Date {
  return ctx.now ? ctx.now() : new Date();
}
