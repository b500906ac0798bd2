/**
 * POSIX shell quoting for the command lines `hooks install` writes into a host's settings: the
 * host runs them through `sh -c`, so every value we put there is one single-quoted word, where
 * `$(…)`, backticks, `$VAR`, spaces and globs stay literal. A single quote inside is written as
 * `'\''` (close, an escaped quote, reopen) — the only character single quotes cannot hold.
 */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
