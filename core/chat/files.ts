/**
 * Which files conversations mode reads, and the wing of AI-agent session folders (docs/palace-behaviour.md §5.1).
 * Pure predicates over names and paths; the scanner does the walking.
 */

export const CONVERSATION_EXTENSIONS = ['.txt', '.md', '.json', '.jsonl'] as const;

/** Session folders of coding agents are filed into this wing unless the caller names one. */
export const AGENT_SESSIONS_WING = 'wing_api';

export function isConversationFileName(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower.endsWith('.meta.json')) return false;
  return CONVERSATION_EXTENSIONS.some((ext) => lower.endsWith(ext) && lower.length > ext.length);
}

/**
 * `wing_api` when the resolved path has a component `.codex` or `.gemini`, or the consecutive
 * components `.claude` then `projects` (exact matches: `.gemini-backup` or `.claude` alone do
 * not count); undefined otherwise, and the caller falls back to the folder's slug.
 */
export function agentSessionsWing(resolvedPath: string): string | undefined {
  const parts = resolvedPath.split(/[\\/]+/);
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '.codex' || parts[i] === '.gemini') return AGENT_SESSIONS_WING;
    if (parts[i] === '.claude' && parts[i + 1] === 'projects') return AGENT_SESSIONS_WING;
  }
  return undefined;
}
