/**
 * What a palace operation needs: its configuration and the ports, chosen by the composition
 * root (stores/open.ts, app/). Operations never import an adapter.
 */
import type { Config } from '../core/config.js';
import type { Embedder } from '../embed/embedder.js';
import type { DrawerIndex } from '../stores/ports/drawers/drawer-index.js';

/** The caller an operation acts for, as a context carries it (issue 28). */
export interface CallActor {
  /**
   * Who makes this call (the token's identity, or MEMPALACE_AGENT for the local user), set on the
   * drawer context of the runtime a call sees (app/call-runtime.ts) and handed from there to every
   * other context that records who made or changed something. Absent outside a face: who made or
   * changed a record is then unknown, never guessed.
   */
  actor?: string;
}

export interface DrawerContext extends CallActor {
  config: Config;
  drawers: DrawerIndex;
  embedder: Embedder;
  /** Injectable clock so tests can pin `filed_at`. */
  now?: () => Date;
}

/** The call's actor of a runtime, for the contexts of operations other than the drawers'. */
export function callActor(rt: { drawerContext: CallActor }): CallActor {
  return rt.drawerContext.actor === undefined ? {} : { actor: rt.drawerContext.actor };
}

export const CHUNK_SIZE = 800;

export function nowOf(ctx: { now?: () => Date }): Date {
  return ctx.now ? ctx.now() : new Date();
}
