/**
 * Git push webhooks: which provider sent a delivery, whether its secret is right (in constant
 * time), and what it pushed. GitHub signs the raw body with HMAC-SHA256 (`X-Hub-Signature-256:
 * sha256=<hex>`); GitLab sends the shared token itself (`X-Gitlab-Token`). Only JSON payloads are
 * accepted (GitHub's "application/json" content type).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { invalidArgument } from '../core/errors.js';
import type { GitPush } from '../palace/registered-sources.js';

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
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) throw invalidArgument('body', 'json_object', 'the webhook payload must be a JSON object');
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
