/**
 * What identifies the vectors of a palace: the model's name, the length of its vectors and the
 * SHA-256 of its weights file. A palace records it with its first vectors; vectors of two
 * identities are never mixed in one palace, and exports carry it in their header.
 *
 * An encoder set of several models (embed/encoder-set.ts) is one identity too: its name is the
 * set's canonical text, its dimension the sum of its members', its checksum the SHA-256 over the
 * members' names, weights and checksums, and `encoders` lists the members. A one-model identity
 * (every palace recorded before sets existed) has no `encoders`: it is the set of that model alone.
 */
export interface ModelIdentity {
  name: string;
  dimension: number;
  weightsSha256: string;
  /** The members of an encoder set of two or more models, in the set's order. */
  encoders?: EncoderIdentity[];
}

/** One member of an encoder set: its model's identity and its weight (the set's weights sum to 1). */
export interface EncoderIdentity {
  name: string;
  dimension: number;
  weight: number;
  weightsSha256: string;
}

export function sameModel(a: ModelIdentity, b: ModelIdentity): boolean {
  const members = (m: ModelIdentity) => JSON.stringify((m.encoders ?? []).map((e) => [e.name, e.dimension, e.weight, e.weightsSha256]));
  return a.name === b.name && a.dimension === b.dimension && a.weightsSha256 === b.weightsSha256 && members(a) === members(b);
}

/** The encoders of an identity with their weights: its members, or the one model at weight 1. */
export function encodersOf(m: ModelIdentity): EncoderIdentity[] {
  return m.encoders ?? [{ name: m.name, dimension: m.dimension, weight: 1, weightsSha256: m.weightsSha256 }];
}
