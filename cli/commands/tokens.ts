/**
 * `mempalace tokens check TOKEN`: what a bearer token of this server may do — its identity,
 * scopes, source roots and wing grants — as `serve` would resolve it from the configured
 * tokens (and the OAuth issuer, when one is configured). `-` reads the token from stdin, so it
 * need not appear in the shell history. Tokens do not apply to the local CLI itself.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { Config } from '../../core/config.js';
import type { Caller } from '../../core/caller.js';
import { PalaceError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import { Authenticator } from '../../api/auth.js';
import { oauthFromConfig } from '../../api/oauth.js';
import { printJson, table } from '../output.js';

export interface TokenCommandDeps {
  config(): Config;
  log(config: Config): Logger;
  json(): boolean;
}

/** The caller's wing access in words, for people: what `wings` means for this token. */
function wingSummary(caller: Caller): string {
  if (caller.scopes.includes('admin')) return 'every wing (admin)';
  if (!caller.wings) return 'every wing, as the scopes allow (no wing grants)';
  return 'only the wings below; any other wing is invisible';
}

export function registerTokenCommands(program: Command, deps: TokenCommandDeps): void {
  program
    .command('tokens')
    .description('bearer tokens of `serve`')
    .command('check')
    .description('print what a token may do: identity, scopes, roots, wing grants (`-` reads the token from stdin)')
    .argument('<token>', 'the token, or - to read it from stdin')
    .action(async (arg: string) => {
      const token = (arg === '-' ? fs.readFileSync(0, 'utf8') : arg).trim();
      const config = deps.config();
      const auth = Authenticator.fromConfig(config, oauthFromConfig(config, deps.log(config)));
      const principal = await auth.resolveAsync(`Bearer ${token}`);
      if (!principal) throw new PalaceError('unauthenticated', 'this token is not accepted by the configured tokens (or OAuth issuer)', { rule: 'token' });
      const c = principal.caller;
      const view = { identity: c.identity, scopes: c.scopes, roots: c.roots ?? null, wings: c.wings ?? null, wing_access: wingSummary(c) };
      if (deps.json()) return printJson(view);
      console.log(`identity: ${c.identity}`);
      console.log(`scopes:   ${c.scopes.join(', ')}`);
      console.log(`roots:    ${c.roots ? c.roots.join(', ') : "the server's allowed roots"}`);
      console.log(`wings:    ${view.wing_access}`);
      if (c.wings && !c.scopes.includes('admin')) console.log(table(['wing pattern', 'access'], Object.entries(c.wings)));
    });
}
