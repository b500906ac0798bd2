/**
 * What identifies the vectors of a palace: the model's name, the length of its vectors and the
 * SHA-256 of its weights file. A palace records it with its first vectors; vectors of two
 * identities are never mixed in one palace, and exports carry it in their header.
 */
export interface ModelIdentity {
  name: string;
  dimension: number;
  weightsSha256: string;
}

export function sameModel(a: ModelIdentity, b: ModelIdentity): boolean {
  return a.name === b.name && a.dimension === b.dimension && a.weightsSha256 === b.weightsSha256;
}
