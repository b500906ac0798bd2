/**
 * Palace read tools (docs/tools.md §2): overview, wings, rooms, taxonomy, search, duplicate check,
 * the AAAK spec. Each is a binding of a palace operation (palace/operation.ts): the schemas and
 * input rules are the operation's; this table says what is MCP's own.
 */
import { checkDuplicateOperation } from '../../palace/drawers/drawers.js';
import { searchOperation } from '../../palace/search/search.js';
import { aaakSpecOperation, listRoomsOperation, listWingsOperation, statusOperation, taxonomyOperation } from '../../palace/system/status.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

/** The tool path's difference from REST and the CLI (docs/palace-behaviour.md §8.2, §8.6): long queries are sanitised, max_distance defaults to 1.5. */
export const MCP_SEARCH_OPTIONS = { sanitize: true, defaultMaxDistance: 1.5 };

export const palaceReadTools: ToolDef[] = [
  toolOf(statusOperation, {
    description:
      'Call this first, on wake-up. Returns the palace overview (total drawers, drawers per wing and per room), the memory protocol you should follow, the AAAK note dialect, the storage backend, and health diagnostics (integrity check, library versions, updates).',
    guards: { integritySafe: true },
    serverDiagnostics: true,
    errorShape: 'error',
  }),
  toolOf(listWingsOperation, {
    description: 'List every wing (project or person) with its drawer count. Use it to see what the palace holds before filtering a search by wing.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(listRoomsOperation, {
    description:
      'List the rooms (topics) with drawer counts inside one wing, or across all wings when no wing is given. Returns { wing, rooms }; wing is "all" without a filter.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(taxonomyOperation, {
    description: 'The full tree wing → room → drawer count, in one call. Use it to orient yourself in an unfamiliar palace.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(searchOperation, {
    description:
      'Search the palace and get verbatim drawer text with similarity scores. Use it before answering about anything from the past: pass short keywords or one question (not the whole conversation). Filter by wing, room, exact source_file path, or a filed-at window (since inclusive, before exclusive). Hybrid by default (vector plus BM25 lexical candidates); results are ranked best first.',
    guards: {},
    errorShape: 'error',
    options: MCP_SEARCH_OPTIONS,
  }),
  toolOf(checkDuplicateOperation, {
    description:
      'Before filing, check whether near-identical content already exists. Examines the 5 nearest drawers and returns those with similarity ≥ threshold (default 0.9), nearest first.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(aaakSpecOperation, {
    description: 'Return the AAAK dialect: the compact note format (entity codes, emotion markers, pipes, stars) to read and write diary entries in.',
    guards: {},
    idempotent: true,
    errorShape: 'error',
  }),
];
