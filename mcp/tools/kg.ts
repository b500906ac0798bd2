/**
 * Knowledge-graph tools (docs/tools.md §4): temporal facts subject → predicate → object.
 */
import { kgAdd, kgInvalidate, kgQuery, kgStats, kgSupersede, kgTimeline } from '../../palace/kg/kg.js';
import type { KgContext } from '../../palace/kg/kg.js';
import { arrayOf, input, output, shape, str, types } from '../schema.js';
import type { ToolContext, ToolDef } from '../types.js';

const { S, N, I, B, SN } = types;
const kg = (ctx: ToolContext): KgContext => ({ graph: ctx.runtime.stores.graph });
const DATE_HINT = 'YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ';
const FACT_WRITE = shape({ success: { const: true }, triple_id: S, fact: S });

export const kgTools: ToolDef[] = [
  {
    name: 'mempalace_kg_query',
    description:
      'Everything the knowledge graph knows about one entity: its facts (outgoing first, then incoming), each with its validity window and whether it is current. Pass as_of to see only what was true at that date or instant. Use before answering about a person or project.',
    inputSchema: input({
      entity: str('Entity name (person, project, thing).'),
      as_of: str(`Only facts valid at this date/instant (${DATE_HINT}).`),
      direction: str('outgoing (entity → ?), incoming (? → entity) or both.', { enum: ['outgoing', 'incoming', 'both'], default: 'both' }),
    }, ['entity']),
    outputSchema: output(shape({
      entity: S,
      as_of: SN,
      facts: arrayOf(shape({ direction: S, subject: S, predicate: S, object: S, valid_from: SN, valid_to: SN, confidence: N, source_closet: SN, current: B })),
      count: I,
    })),
    guards: {},
    errorShape: 'error',
    enumMessages: { direction: () => "direction must be 'outgoing', 'incoming', or 'both'" },
    handler: (args, ctx) => kgQuery(kg(ctx), args as { entity: unknown }),
  },
  {
    name: 'mempalace_kg_add',
    description:
      'Add a fact (subject → predicate → object), optionally with a validity window and where it came from. Adding a fact that is already current returns its existing id. For a single-valued fact that changed, use mempalace_kg_supersede instead.',
    inputSchema: input({
      subject: str('Entity doing or being.'),
      predicate: str('Relationship type, e.g. works_on, loves.'),
      object: str('Connected entity or value.'),
      valid_from: str(`When it became true (${DATE_HINT}).`),
      valid_to: str(`When it stopped being true, to backfill an ended fact (${DATE_HINT}).`),
      source_closet: str('Closet id where the fact appears.'),
      source_file: str('File the fact was extracted from.'),
      source_drawer_id: str('Drawer the fact was extracted from.'),
    }, ['subject', 'predicate', 'object']),
    outputSchema: output(FACT_WRITE),
    guards: { mutating: true, readOnlyRefused: true },
    idempotent: true,
    errorShape: 'success_false',
    handler: (args, ctx) => kgAdd(kg(ctx), args as { subject: unknown; predicate: unknown; object: unknown }),
  },
  {
    name: 'mempalace_kg_invalidate',
    description: 'Mark a fact as no longer true from a date on (default today). The fact is kept and stays visible to as_of queries before that date.',
    inputSchema: input({
      subject: str('Entity.'),
      predicate: str('Relationship.'),
      object: str('Connected entity.'),
      ended: str(`When it stopped being true (${DATE_HINT}; default today).`),
    }, ['subject', 'predicate', 'object']),
    outputSchema: output(shape({ success: { const: true }, fact: S, ended: S })),
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    idempotent: true,
    errorShape: 'success_false',
    handler: (args, ctx) => kgInvalidate(kg(ctx), args as { subject: unknown; predicate: unknown; object: unknown }),
  },
  {
    name: 'mempalace_kg_supersede',
    description:
      'Replace a single-valued fact (model, employer, address) with its successor at one boundary instant, atomically: the old value ends exactly where the new one starts.',
    inputSchema: input({
      subject: str('Entity whose fact changes.'),
      predicate: str('Relationship, e.g. uses_model, works_at.'),
      old_object: str('Value being replaced.'),
      new_object: str('New value.'),
      at: str(`Boundary (${DATE_HINT}; default now).`),
    }, ['subject', 'predicate', 'old_object', 'new_object']),
    outputSchema: output(shape({ success: { const: true }, triple_id: S, fact: S, superseded: S })),
    guards: { mutating: true, readOnlyRefused: true },
    destructive: true,
    errorShape: 'success_false',
    handler: (args, ctx) => kgSupersede(kg(ctx), args as { subject: unknown; predicate: unknown; old_object: unknown; new_object: unknown }),
  },
  {
    name: 'mempalace_kg_timeline',
    description: 'Facts in chronological order (by valid_from, undated last; at most 100), for one entity or the whole graph, current and ended alike.',
    inputSchema: input({ entity: str('Entity to follow (as subject or object); omit for all facts.') }),
    outputSchema: output(
      shape({ entity: S, timeline: arrayOf(shape({ subject: S, predicate: S, object: S, valid_from: SN, valid_to: SN, current: B })), count: I }),
    ),
    guards: {},
    errorShape: 'error',
    handler: (args, ctx) => kgTimeline(kg(ctx), args),
  },
  {
    name: 'mempalace_kg_stats',
    description: 'Knowledge-graph overview: entity and fact counts, current versus expired facts, and the relationship types in use.',
    inputSchema: input(),
    outputSchema: output(shape({ entities: I, triples: I, current_facts: I, expired_facts: I, relationship_types: arrayOf(S) })),
    guards: {},
    errorShape: 'error',
    handler: (_args, ctx) => kgStats(kg(ctx)),
  },
];
