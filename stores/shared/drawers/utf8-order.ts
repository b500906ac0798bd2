/**
 * The order of drawer ids in both profiles: byte order of their UTF-8 encodings (SQLite's BINARY
 * collation; Lucene's keyword order). JavaScript's `<` compares UTF-16 code units, which differs
 * from it for characters beyond the Basic Multilingual Plane.
 */
export function utf8Compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
