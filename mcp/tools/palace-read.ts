/**
 * Palace read tools (mcp-tools §2): overview, wings, rooms, taxonomy, search, duplicate check,
 * the AAAK spec.
 */
import { AAAK_SPEC, PALACE_PROTOCOL } from '../../core/protocol.js';
import { checkDuplicate } from '../../palace/drawers.js';
import { search, CANDIDATE_STRATEGIES } from '../../palace/search.js';
import { listRooms, listWings, palaceCounts, taxonomy } from '../../palace/status.js';
import { arrayOf, input, int, num, output, shape, str, types } from '../schema.js';
import type { ToolDef } from '../types.js';

const { S, N, I, SN, B, counts } = types;

const SEARCH_HIT = shape({
  text: S, wing: S, room: S, source_file: S, source_path: S, drawer_id: S, created_at: S,
  similarity: types.nullable(N), distance: types.nullable(N),
});

export const palaceReadTools: ToolDef[] = [
  {
    name: 'mempalace_status',
    description: 'Call this first, on wake-up. Returns the palace overview (total drawers, drawers per wing and per room), the memory protocol you should follow, the AAAK note dialect, the storage backend, and health diagnostics (integrity check, library versions, updates).',
    inputSchema: input(),
    outputSchema: output(shape({ total_drawers: I, wings: counts, rooms: counts, protocol: S, aaak_dialect: S, backend: S })),
    guards: { integritySafe: true },
    serverDiagnostics: true,
    errorShape: 'error',
    async handler(_args, ctx) {
      return { ...(await palaceCounts(ctx.runtime.stores.drawers)), protocol: PALACE_PROTOCOL, aaak_dialect: AAAK_SPEC };
    },
  },
  {
    name: 'mempalace_list_wings',
    description: 'List every wing (project or person) with its drawer count. Use it to see what the palace holds before filtering a search by wing.',
    inputSchema: input(),
    outputSchema: output(shape({ wings: counts })),
    guards: {},
    errorShape: 'error',
    handler: (_args, ctx) => listWings(ctx.runtime.stores.drawers),
  },
  {
    name: 'mempalace_list_rooms',
    description: 'List the rooms (topics) with drawer counts inside one wing, or across all wings when no wing is given. Returns { wing, rooms }; wing is "all" without a filter.',
    inputSchema: input({ wing: str('Wing to list rooms for; omit for all wings.') }),
    outputSchema: output(shape({ wing: S, rooms: counts })),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => listRooms(ctx.runtime.stores.drawers, args),
  },
  {
    name: 'mempalace_get_taxonomy',
    description: 'The full tree wing → room → drawer count, in one call. Use it to orient yourself in an unfamiliar palace.',
    inputSchema: input(),
    outputSchema: output(shape({ taxonomy: { type: 'object', additionalProperties: counts } })),
    guards: {},
    errorShape: 'error',
    handler: async (_args, ctx) => ({ taxonomy: await taxonomy(ctx.runtime.stores.drawers) }),
  },
  {
    name: 'mempalace_search',
    description: 'Search the palace and get verbatim drawer text with similarity scores. Use it before answering about anything from the past: pass short keywords or one question (not the whole conversation). Filter by wing, room, exact source_file path, or a filed-at window (since inclusive, before exclusive). Hybrid by default (vector plus BM25 lexical candidates); results are ranked best first.',
    inputSchema: input({
      query: str('Search keywords or one short question.', { maxLength: 250 }),
      limit: int('Maximum results (1–100; out-of-range values are clamped).', { minimum: 1, maximum: 100, default: 5 }),
      wing: str('Only drawers in this wing.'),
      room: str('Only drawers in this room.'),
      source_file: str('Only drawers whose full stored source path equals this (use a hit\'s source_path).'),
      since: str('Only drawers filed at or after this ISO date/datetime.'),
      before: str('Only drawers filed strictly before this ISO date/datetime.'),
      max_distance: num('Drop results whose cosine distance exceeds this (0 identical … 2 opposite; 0 disables).', { minimum: 0, default: 1.5 }),
      candidate_strategy: str('"union" (default) adds BM25 lexical candidates to the vector ones; "vector" uses vectors only.', { enum: [...CANDIDATE_STRATEGIES] }),
      context: str('Background for your own benefit; never embedded or used for ranking.'),
    }, ['query']),
    outputSchema: output(shape({
      query: S,
      filters: shape({ wing: SN, room: SN, source_file: SN, since: SN, before: SN }),
      results: arrayOf(SEARCH_HIT),
    })),
    guards: {},
    errorShape: 'error',
    advisory: ['query', 'limit'],
    enumMessages: { candidate_strategy: (v) => `candidate_strategy must be one of: ${CANDIDATE_STRATEGIES.join(', ')} (got ${JSON.stringify(v)})` },
    handler: (args, ctx) => search(ctx.runtime.drawerContext, args as { query: unknown }, { sanitize: true, defaultMaxDistance: 1.5 }),
  },
  {
    name: 'mempalace_check_duplicate',
    description: 'Before filing, check whether near-identical content already exists. Examines the 5 nearest drawers and returns those with similarity ≥ threshold (default 0.9), nearest first.',
    inputSchema: input({
      content: str('Content to check.'),
      threshold: num('Minimum similarity (0–1) to count as a duplicate.', { minimum: 0, maximum: 1, default: 0.9 }),
    }, ['content']),
    outputSchema: output(shape({ is_duplicate: B, matches: arrayOf(shape({ id: S, wing: S, room: S, similarity: N, content: S })) })),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => checkDuplicate(ctx.runtime.drawerContext, args as { content: unknown }),
  },
  {
    name: 'mempalace_get_aaak_spec',
    description: 'Return the AAAK dialect: the compact note format (entity codes, emotion markers, pipes, stars) to read and write diary entries in.',
    inputSchema: input(),
    outputSchema: output(shape({ aaak_spec: S })),
    guards: {},
    idempotent: true,
    errorShape: 'error',
    handler: async () => ({ aaak_spec: AAAK_SPEC }),
  },
];
