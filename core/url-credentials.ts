/**
 * Credentials written into source URLs (`https://oauth2:<token>@host/repo.git`): split off before
 * a URL is stored or shown, and masked in any text that may still carry one (log lines, drawers
 * mined before the split, exports of them).
 *
 * For https every part of the user-info is a credential: hosts accept a token as the user name
 * alone (`https://<token>@host/…`). For ssh the user name is the login the key authenticates
 * (`git@host`), not a secret, and is kept; a password in an ssh URL is refused, since git never
 * sends it (ssh runs in batch mode with keys only).
 */
import { invalidArgument } from './errors.js';

/** What git answers to its username and password prompts for one source URL. */
export interface GitCredential {
  username: string;
  password: string;
}

const WITH_USERINFO = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)@/;

/**
 * The URL without its credential, and the credential when it had one. URLs with no user-info,
 * ssh URLs with only a user name, scp-like `user@host:path` and local paths come back unchanged.
 */
export function splitUrlCredential(field: string, url: string): { url: string; credential?: GitCredential } {
  const m = WITH_USERINFO.exec(url);
  if (!m) return { url };
  const scheme = m[1]!.toLowerCase();
  const userinfo = m[2]!;
  if (scheme === 'ssh' || scheme === 'git+ssh') {
    if (userinfo.includes(':'))
      throw invalidArgument(field, 'git_ssh_password', `${field}: an ssh URL may name a user but not a password; ssh sources authenticate with keys`);
    return { url };
  }
  if (scheme !== 'https' && scheme !== 'http') return { url };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument(field, 'git_url', `${field} is not a valid URL`);
  }
  const credential = { username: decodeURIComponent(parsed.username), password: decodeURIComponent(parsed.password) };
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), credential };
}

/** `scheme://user:password@` and http(s) `scheme://user@` in any text. */
const CREDENTIAL_IN_TEXT = /\b(https?:\/\/)[^\s/?#@"'<>]+@|\b([A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s/?#@:"'<>]*):[^\s/?#@"'<>]*@/gi;

/** `text` with every credential written into a URL in it replaced by `***`. */
export function maskUrlCredentials(text: string): string {
  return text.replace(CREDENTIAL_IN_TEXT,
    (_all, http: string | undefined, userPart: string | undefined) => (http !== undefined ? `${http}***@` : `${userPart}:***@`));
}
