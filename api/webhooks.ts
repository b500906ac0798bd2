/**
 * Git push webhooks: which provider sent a delivery, whether its secret is right (in constant
 * time), and what it pushed. GitHub signs the raw body with HMAC-SHA256 (`X-Hub-Signature-256:
 * sha256=<hex>`); GitLab sends the shared token itself (`X-Gitlab-Token`). Only JSON payloads are
 * accepted (GitHub's "application/json" content type).
 *
 * Replays: each delivery is remembered for REPLAY_WINDOW_MS by its id (GitHub
 * `X-GitHub-Delivery`, GitLab `X-Gitlab-Event-UUID`) and by the digest of its body — the id is
 * not covered by GitHub's signature, so the same signed body under a new id is a replay too —
 * and a GitHub push whose signed `repository.pushed_at` is older than that window is refused, so a
 * captured delivery cannot be replayed after it is forgotten. GitLab signs nothing (its token is
 * the secret itself), so it has no timestamp to check.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { invalidArgument } from '../core/errors.js';
import type { GitPush } from '../palace/sources/registered-sources.js';

export type Provider = 'github' | 'gitlab';

const ZERO_COMMIT = /^0+$/;

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function providerOf(headers: IncomingHttpHeaders): { provider: Provider; event: string } {
  const github = header(headers, 'x-github-event');
  if (github) return { provider: 'github', event: github };
  const gitlab = header(headers, 'x-gitlab-event');
  if (gitlab) return { provider: 'gitlab', event: gitlab };
  throw invalidArgument('X-GitHub-Event', 'webhook_provider', 'not a GitHub (X-GitHub-Event) or GitLab (X-Gitlab-Event) webhook delivery');
}

/** Equal digests in constant time; hashing first makes both sides the same length whatever was sent. */
function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** How long a delivery is remembered, and how old a signed GitHub push may be. */
export const REPLAY_WINDOW_MS = 24 * 3600 * 1000;

const DELIVERY_HEADER: Record<Provider, string> = { github: 'X-GitHub-Delivery', gitlab: 'X-Gitlab-Event-UUID' };
const DELIVERY_ID = /^[\w.:-]{1,128}$/;

/** The header naming a provider's delivery id (the `field` of replay refusals). */
export function deliveryHeader(provider: Provider): string {
  return DELIVERY_HEADER[provider];
}

/** What a delivery is remembered by: its id, and the digest of the exact body. */
export function deliveryKeys(provider: Provider, headers: IncomingHttpHeaders, rawBody: Buffer): string[] {
  const name = DELIVERY_HEADER[provider];
  const id = header(headers, name.toLowerCase())?.trim();
  if (!id || !DELIVERY_ID.test(id))
    throw invalidArgument(name, 'webhook_delivery_id', `the ${provider} delivery has no usable ${name} header (1-128 letters, digits, '.', ':', '_' or '-')`);
  return [`${provider}:${id}`, `body:${createHash('sha256').update(rawBody).digest('hex')}`];
}

/** A signed GitHub push older than the replay window (by its `repository.pushed_at`, seconds) is refused. */
export function assertFreshPush(provider: Provider, payload: unknown, nowMs: number): void {
  if (provider !== 'github' || typeof payload !== 'object' || payload === null) return;
  const repo = (payload as { repository?: { pushed_at?: unknown } }).repository;
  const pushedAt = repo?.pushed_at;
  if (typeof pushedAt === 'number' && Number.isFinite(pushedAt) && nowMs - pushedAt * 1000 > REPLAY_WINDOW_MS) {
    throw invalidArgument('repository.pushed_at', 'webhook_stale',
      `the push is from ${new Date(pushedAt * 1000).toISOString()}, older than the ${REPLAY_WINDOW_MS / 3_600_000} h replay window`);
  }
}

export function signatureValid(provider: Provider, headers: IncomingHttpHeaders, rawBody: Buffer, secret: string): boolean {
  if (provider === 'gitlab') return sameSecret(header(headers, 'x-gitlab-token') ?? '', secret);
  const expected = `sha256=${createHmac('sha256', secret).update(rawBody).digest('hex')}`;
  return sameSecret(header(headers, 'x-hub-signature-256') ?? '', expected);
}

/** Whether the event is a push (branch or tag); other events (ping, issues, ...) are acknowledged and ignored. */
export function isPushEvent(provider: Provider, event: string): boolean {
  return provider === 'github' ? event === 'push' : event === 'Push Hook' || event === 'Tag Push Hook';
}

const strings = (...values: unknown[]): string[] => values.filter((v): v is string => typeof v === 'string' && v.trim() !== '');

/** The push a payload describes; undefined when it deletes the ref (nothing to mine). */
export function parsePush(provider: Provider, payload: unknown): GitPush | undefined {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw invalidArgument('body', 'json_object', 'the webhook payload must be a JSON object');
  const p = payload as Record<string, unknown>;
  const ref = p.ref;
  if (typeof ref !== 'string' || ref === '') throw invalidArgument('ref', 'required', 'the push payload has no ref');
  const after = typeof p.after === 'string' ? p.after : undefined;
  if (p.deleted === true || (after !== undefined && ZERO_COMMIT.test(after))) return undefined;
  const repo = (typeof p.repository === 'object' && p.repository ? p.repository : {}) as Record<string, unknown>;
  const project = (typeof p.project === 'object' && p.project ? p.project : {}) as Record<string, unknown>;
  const repoUrls = provider === 'github'
    ? strings(repo.clone_url, repo.ssh_url, repo.git_url, repo.html_url, repo.url)
    : strings(project.git_http_url, project.git_ssh_url, project.web_url, repo.git_http_url, repo.git_ssh_url, repo.url, repo.homepage);
  if (repoUrls.length === 0) throw invalidArgument('repository', 'required', 'the push payload names no repository URL');
  return { provider, repoUrls, ref, after: provider === 'gitlab' && typeof p.checkout_sha === 'string' ? p.checkout_sha : after };
}
