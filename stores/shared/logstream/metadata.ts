/** Reading an event's or artifact's stored metadata text back, the same way in every adapter. */

/** The stored canonical JSON object; anything else (absent, not JSON, not an object) reads as `{}`. */
export function parseMetadata(text: string | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(text ?? '{}') as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
