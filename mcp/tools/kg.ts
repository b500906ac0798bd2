/**
 * Knowledge-graph tools (docs/tools.md §4): temporal facts subject → predicate → object, as
 * bindings of the operations of palace/kg/kg.ts.
 */
import { kgAddOperation, kgInvalidateOperation, kgQueryOperation, kgStatsOperation, kgSupersedeOperation, kgTimelineOperation } from '../../palace/kg/kg.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

export const kgTools: ToolDef[] = [
  toolOf(kgQueryOperation, {
    description:
      'Everything the knowledge graph knows about one entity: its facts (outgoing first, then incoming), each with its validity window, whether it is current, who added it and who last ended it. Pass as_of to see only what was true at that date or instant. Use before answering about a person or project.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(kgAddOperation, {
    description:
      'Add a fact (subject → predicate → object), optionally with a validity window and where it came from. Adding a fact that is already current returns its existing id. For a single-valued fact that changed, use mempalace_kg_supersede instead.',
    guards: { mutating: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
  }),
  toolOf(kgInvalidateOperation, {
    description: 'Mark a fact as no longer true from a date on (default today). The fact is kept and stays visible to as_of queries before that date.',
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'success_false',
  }),
  toolOf(kgSupersedeOperation, {
    description:
      'Replace a single-valued fact (model, employer, address) with its successor at one boundary instant, atomically: the old value ends exactly where the new one starts.',
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    errorShape: 'success_false',
  }),
  toolOf(kgTimelineOperation, {
    description: 'Facts in chronological order (by valid_from, undated last; at most 100), for one entity or the whole graph, current and ended alike.',
    guards: {},
    errorShape: 'error',
  }),
  toolOf(kgStatsOperation, {
    description: 'Knowledge-graph overview: entity and fact counts, current versus expired facts, and the relationship types in use.',
    guards: {},
    errorShape: 'error',
  }),
];
