/**
 * Agent identities. Static tokens name agents (`alice`: the NAME rules, compared without case);
 * OAuth access tokens act in their own namespace, `oauth:<issuer>#<subject>`, so an issuer can
 * never mint a token that acts as a configured agent such as `alice`, `ops` or `local` (issue 24
 * O1) unless the token file maps that subject to it. OAuth subjects are case-sensitive (OpenID
 * Connect Core §5.7), so these identities are kept and compared exactly.
 */
import { invalidArgument } from './errors.js';
import { codePointLength, hashN } from './text.js';
import { validateName } from './validate.js';

export const OAUTH_IDENTITY_PREFIX = 'oauth:';
/** The longest identity: what the logstream's routing fields (`from_agent`, `created_by`) hold. */
export const AGENT_IDENTITY_MAX = 256;

/** The identity of an access token's subject, or undefined when it could not be used as a name. */
export function oauthIdentity(issuer: string, subject: string): string | undefined {
  const identity = `${OAUTH_IDENTITY_PREFIX}${issuer}#${subject}`;
  if (subject === '' || codePointLength(identity) > AGENT_IDENTITY_MAX || hasControl(identity)) return undefined;
  return identity;
}

export function isOAuthIdentity(name: string): boolean {
  return name.trim().startsWith(OAUTH_IDENTITY_PREFIX);
}

function hasControl(s: string): boolean {
  return [...s].some((c) => c.codePointAt(0)! < 0x20 || c.codePointAt(0) === 0x7f);
}

/**
 * An agent name as stored: a NAME lowercased, or an OAuth identity exactly as given. The error
 * names `field` and the rule broken.
 */
export function validateAgentName(field: string, value: unknown): string {
  if (typeof value === 'string' && isOAuthIdentity(value)) {
    const v = value.trim();
    if (codePointLength(v) > AGENT_IDENTITY_MAX)
      throw invalidArgument(field, 'max_length', `${field} exceeds maximum length of ${AGENT_IDENTITY_MAX} characters`);
    if (hasControl(v)) throw invalidArgument(field, 'control_characters', `${field} contains control characters`);
    if (!/#./.test(v)) throw invalidArgument(field, 'oauth_identity', `${field} must look like oauth:<issuer>#<subject>`);
    return v;
  }
  return validateName(field, value).toLowerCase();
}

/** Whether two agent names name the same agent: NAMEs without case, OAuth identities exactly. */
export function sameAgent(a: string, b: string): boolean {
  if (isOAuthIdentity(a) || isOAuthIdentity(b)) return a.trim() === b.trim();
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * The diary's default wing of an agent: `wing_<name>`; an OAuth identity holds characters no
 * wing may, so its wing is a readable slug of the subject plus a hash of the whole identity.
 */
export function agentDiaryWing(agent: string): string {
  if (!isOAuthIdentity(agent)) return `wing_${agent.replace(/ /g, '_')}`;
  const subject = agent.slice(agent.lastIndexOf('#') + 1);
  const slug = subject.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 40);
  return `wing_oauth_${slug === '' ? '' : `${slug}_`}${hashN(agent, 8)}`;
}
