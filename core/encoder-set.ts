/**
 * An encoder set: the embedding models whose vectors a palace fuses, each with its weight
 * (issue 26). Written `name:weight,name:weight` (MEMPALACE_ENCODERS, `mempalace reembed
 * --encoders`); a lone name means weight 1. Weights are normalised to sum 1, so one set has one
 * canonical text whatever scale it was written in. Which names exist is embed/'s business.
 */
import { invalidArgument } from './errors.js';

export interface EncoderWeight {
  name: string;
  /** Share of this encoder's cosine in the fused score; the weights of a set sum to 1. */
  weight: number;
}

/** Weights are kept to 6 decimals, so a set's text and its arithmetic agree exactly. */
const WEIGHT_DECIMALS = 1e6;

/** The set written in `text`, weights normalised; a bad text is an `invalid_argument` naming `field`. */
export function parseEncoderSet(text: string, field: string): EncoderWeight[] {
  const parts = text.split(',').map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) throw invalidArgument(field, 'encoder_set', `${field} must name at least one encoder, got '${text}'`);
  const raw = parts.map((part) => {
    const m = /^([^:\s]+)(?::([0-9]*\.?[0-9]+))?$/.exec(part);
    const weight = m?.[2] === undefined ? 1 : Number(m[2]);
    if (m === null || !(weight > 0)) {
      throw invalidArgument(field, 'encoder_set', `${field} is a comma-separated list of encoder[:weight] with weights above 0, got '${part}'`);
    }
    return { name: m[1]!, weight };
  });
  const names = raw.map((e) => e.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw invalidArgument(field, 'encoder_set', `${field} names ${twice} twice`);
  const sum = raw.reduce((s, e) => s + e.weight, 0);
  return raw.map((e) => ({ name: e.name, weight: Math.round((e.weight / sum) * WEIGHT_DECIMALS) / WEIGHT_DECIMALS }));
}

/** The canonical text of a set: a lone encoder is its name, otherwise `name:weight,…`. */
export function encoderSetText(set: readonly EncoderWeight[]): string {
  if (set.length === 1) return set[0]!.name;
  return set.map((e) => `${e.name}:${e.weight}`).join(',');
}
