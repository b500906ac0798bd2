/**
 * The agent-facing texts of the host integration: the protocol in brief for the wake-up context,
 * and the rules block an agent host reads from its instructions file (CLAUDE.md, AGENTS.md,
 * GEMINI.md). Both say what PALACE_PROTOCOL says, shorter; the project's own wording.
 */

export const WAKE_UP_PROTOCOL = [
  '- Before answering about a person, a project or a past event, check: mempalace_kg_query for facts, mempalace_search for the verbatim record. Never guess.',
  '- Unsure of a fact? Say so, check the palace, then answer.',
  '- A single-valued fact changed: mempalace_kg_supersede. A fact ended: mempalace_kg_invalidate. A new fact: mempalace_kg_add.',
  '- At the end of the session: mempalace_diary_write (what happened, what was learned, what matters next).',
].join('\n');

export const RULES_HOSTS = ['claude-code', 'codex', 'gemini'] as const;
export type RulesHost = (typeof RULES_HOSTS)[number];

export const RULES_FILES: Record<RulesHost, string> = { 'claude-code': 'CLAUDE.md', codex: 'AGENTS.md', gemini: 'GEMINI.md' };

export const RULES_BEGIN = '<!-- mempalace:rules:begin -->';
export const RULES_END = '<!-- mempalace:rules:end -->';

/** The rules block, between markers so a later version can replace it in place. */
export function agentRules(host: RulesHost): string {
  const hooks = host === 'gemini'
    ? 'Call mempalace_status when a session starts, and save the session with mempalace_checkpoint before it ends.'
    : 'The MemPalace hooks load a wake-up context when a session starts and file the conversation into the palace every 15 human messages and before a compaction; mempalace_memories_filed_away tells what they filed.';
  return [
    RULES_BEGIN,
    `## Memory: MemPalace (for ${RULES_FILES[host]})`,
    '',
    'MemPalace is your long-term memory, served by the `mempalace` MCP server (tools named `mempalace_*`).',
    '',
    '1. On wake-up, call `mempalace_status`: the palace overview, the full protocol and the AAAK note dialect.',
    '2. Before answering about a person, a project or something that happened earlier, look it up: `mempalace_kg_query` for facts, `mempalace_search` for the verbatim record. Do not guess.',
    '3. When unsure of a fact, say so and check the palace before answering.',
    '4. After each session, write a diary entry with `mempalace_diary_write`: what happened, what you learned, what matters next.',
    '5. When a fact changes: `mempalace_kg_supersede` for a single-valued fact, `mempalace_kg_invalidate` for a fact that ended, `mempalace_kg_add` for a new one.',
    '',
    hooks,
    RULES_END,
  ].join('\n');
}
