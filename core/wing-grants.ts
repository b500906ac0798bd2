/**
 * Per-wing grants of a token or OAuth identity (issue 28): a map from wing pattern to access,
 * `{"team_*": "write", "alice_*": "write", "*": "read"}`.
 *
 * - A pattern is a wing name in which `*` stands for any run of characters (none included); the
 *   match is exact and case-sensitive otherwise, on the wing as stored.
 * - `write` implies `read`; `none` hides a wing that a wider pattern would grant
 *   (`{"*": "read", "hr": "none"}`).
 * - Several patterns match: the most specific one decides, that is the one with the most
 *   characters other than `*` (`team_*` over `*`, `team_a` over `team_*`); between equally
 *   specific ones the weaker access wins, so the order of the map never matters.
 * - A wing no pattern matches is invisible.
 *
 * Absent grants mean today's behaviour: every wing, as the token's scopes allow.
 */
import { invalidArgument } from './errors.js';

export const WING_ACCESS = ['none', 'read', 'write'] as const;
export type WingAccess = (typeof WING_ACCESS)[number];

/** The parsed map, patterns kept as given for messages and `tokens check`. */
export type WingGrants = Readonly<Record<string, WingAccess>>;

/** The OAuth access-token claim that carries the same map as the token file's `wings`. */
export const WINGS_CLAIM = 'mempalace_wings';

const RANK: Record<WingAccess, number> = { none: 0, read: 1, write: 2 };

/** A token file's (or claim's) `wings`, checked whole; the error names the field and the rule. */
export function parseWingGrants(source: string, value: unknown): WingGrants | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value) || Object.keys(value).length === 0) {
    throw invalidArgument('wings', 'pattern_map', `${source}: 'wings' must be a non-empty map of wing pattern to ${WING_ACCESS.join(', ')}`);
  }
  const out: Record<string, WingAccess> = {};
  for (const [pattern, access] of Object.entries(value as Record<string, unknown>)) {
    if (pattern.trim() === '' || pattern !== pattern.trim()) {
      throw invalidArgument('wings', 'pattern', `${source}: wing pattern ${JSON.stringify(pattern)} must be non-empty, without surrounding spaces`);
    }
    if (typeof access !== 'string' || !(WING_ACCESS as readonly string[]).includes(access)) {
      throw invalidArgument('wings', 'access',
        `${source}: wings[${JSON.stringify(pattern)}] is ${JSON.stringify(access)}; expected one of: ${WING_ACCESS.join(', ')}`);
    }
    out[pattern] = access as WingAccess;
  }
  return Object.freeze(out);
}

function patternMatches(pattern: string, wing: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === wing;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (wing.length < first.length + last.length || !wing.startsWith(first) || !wing.endsWith(last)) return false;
  let at = first.length;
  const end = wing.length - last.length;
  for (const middle of parts.slice(1, -1)) {
    const found = wing.indexOf(middle, at);
    if (found < 0 || found + middle.length > end) return false;
    at = found + middle.length;
  }
  return true;
}

/** What the grants allow on one wing. */
export function wingAccess(grants: WingGrants, wing: string): WingAccess {
  let best: { specificity: number; access: WingAccess } | undefined;
  for (const [pattern, access] of Object.entries(grants)) {
    if (!patternMatches(pattern, wing)) continue;
    const specificity = pattern.replaceAll('*', '').length;
    if (!best || specificity > best.specificity || (specificity === best.specificity && RANK[access] < RANK[best.access])) {
      best = { specificity, access };
    }
  }
  return best?.access ?? 'none';
}

export function mayRead(grants: WingGrants, wing: string): boolean {
  return wingAccess(grants, wing) !== 'none';
}

export function mayWrite(grants: WingGrants, wing: string): boolean {
  return wingAccess(grants, wing) === 'write';
}
