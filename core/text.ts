/**
 * Text primitives that count Unicode code points, as the spec requires everywhere (docs/palace-behaviour.md §0): a
 * JavaScript string's `.length` counts UTF-16 units and would change chunk sizes and IDs on text
 * outside the Basic Multilingual Plane.
 */
import { createHash } from 'node:crypto';

export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** `s[start:end]` in code points (end exclusive, clamped). */
export function codePointSlice(s: string, start: number, end?: number): string {
  return Array.from(s).slice(start, end).join('');
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Replace lone UTF-16 surrogates with U+FFFD. */
export function replaceLoneSurrogates(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/** Remove lone UTF-16 surrogates. */
export function stripLoneSurrogates(s: string): string {
  return s.replace(LONE_SURROGATE, '');
}

export function hasLoneSurrogate(s: string): boolean {
  LONE_SURROGATE.lastIndex = 0;
  return LONE_SURROGATE.test(s);
}

export function sha256Hex(s: string | Uint8Array): string {
  return createHash('sha256').update(s).digest('hex');
}

/** First `n` lowercase hex characters of SHA-256 over the UTF-8 bytes. */
export function hashN(s: string, n: number): string {
  return sha256Hex(s).slice(0, n);
}

/** The length-prefixed encoding of the ID recipes: `<code-point length>:<part>` per part. */
export function lengthPrefixed(parts: readonly (string | number)[]): string {
  return parts.map((p) => {
    const s = String(p);
    return `${codePointLength(s)}:${s}`;
  }).join('');
}

/** Unicode-aware strip (Python `str.strip()`). */
export function strip(s: string): string {
  return s.replace(/^\s+|\s+$/gu, '');
}
