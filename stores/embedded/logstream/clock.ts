/**
 * Identifiers, timestamps and the hybrid logical clock of docs/logstream.md §2, for the embedded
 * logstream. The clock state lives in the store (the greatest stored `hlc` is observed inside
 * each write transaction), so several processes appending to one file still produce `hlc`
 * values that increase with `seq`.
 */
export const HLC_MAX_COUNTER = 0xffffff;
export const HLC_FUTURE_DRIFT_MS = 60_000;

export interface HlcState {
  ms: number;
  counter: number;
}

const HLC_RE = /^(\d{13})-([0-9a-f]{6})-(.+)$/;

export function parseHlc(text: string | null | undefined): HlcState | null {
  const m = text ? HLC_RE.exec(text) : null;
  return m ? { ms: Number(m[1]), counter: Number.parseInt(m[2]!, 16) } : null;
}

export function renderHlc(state: HlcState, replicaId: string): string {
  return `${String(state.ms).padStart(13, '0')}-${state.counter.toString(16).padStart(6, '0')}-${replicaId}`;
}

/** A local append: never goes backwards, even when the wall clock does. */
export function tick(state: HlcState, nowMs: number): HlcState {
  if (nowMs > state.ms) return { ms: nowMs, counter: 0 };
  if (state.counter < HLC_MAX_COUNTER) return { ms: state.ms, counter: state.counter + 1 };
  return { ms: state.ms + 1, counter: 0 };
}

/** A stamp seen in the store or from a peer; bogus future stamps (> 60 s ahead) are ignored. */
export function observe(state: HlcState, text: string | null | undefined, nowMs: number): HlcState {
  const remote = parseHlc(text);
  if (!remote || remote.ms > nowMs + HLC_FUTURE_DRIFT_MS) return state;
  if (remote.ms > state.ms || (remote.ms === state.ms && remote.counter > state.counter)) return remote;
  return state;
}

/** `YYYY-MM-DDTHH:MM:SSZ`. */
export function utcSecond(nowMs: number): string {
  return `${new Date(nowMs).toISOString().slice(0, 19)}Z`;
}
