/** The comma-separated items after `flag` on the command line (`--ef 100,200`), or `fallback`'s. */
export function listFlag(flag: string, fallback = ''): string[] {
  const at = process.argv.indexOf(flag);
  return (at >= 0 ? process.argv[at + 1] ?? '' : fallback).split(',').filter(Boolean);
}
