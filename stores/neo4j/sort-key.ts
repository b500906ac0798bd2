/**
 * Sort keys that order the same way under every string comparison Neo4j uses.
 *
 * The embedded adapter orders text by Unicode code point (SQLite compares UTF-8 bytes). Neo4j
 * 5.26 is not consistent: `<` on strings and index-backed `ORDER BY` follow code points, while
 * an `ORDER BY` the planner evaluates itself compares UTF-16 code units, which puts astral
 * characters (surrogate pairs, 0xD800–0xDFFF) before U+E000–U+FFFF. The two orders differ only
 * between those two groups, so the key moves U+E000–U+FFFF below the surrogates: each of them
 * (and U+D7FF, the escape itself) becomes U+D7FF followed by one unit in 0x0001–0x2001, which
 * keeps their relative order. On a key, both comparisons agree with code-point order of the
 * original text, whatever plan Neo4j picks. Text without those characters is its own key.
 */

const ESCAPE = 0xd7ff;
const NEEDS_ESCAPE = /[\ud7ff\ue000-\uffff]/;

export function codePointSortKey(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === ESCAPE) out += '\ud7ff\u0001';
    else if (unit >= 0xe000) out += '\ud7ff' + String.fromCharCode(unit - 0xe000 + 2);
    else out += text[i];
  }
  return out;
}
