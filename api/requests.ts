/**
 * The request models of the REST routes that are not jobs (the job requests are
 * jobs/requests.ts): the routes validate with these objects (api/validate.ts) and the
 * OpenAPI document's request bodies and query parameters are generated from them.
 */
import type { JsonSchema } from '../core/schema.js';
import { input, int, str, text } from '../core/schema.js';
import { NAME_RULES } from '../core/validate.js';
import { MINE_MODES } from '../jobs/job.js';
import { CANDIDATE_STRATEGIES } from '../palace/search.js';
import { SOURCE_RULES } from '../palace/sources.js';

/** `?limit=` of the job, source and notification lists. */
export const LIST_QUERY: JsonSchema = input({ limit: int('How many (default 20).', { minimum: 1, maximum: 200 }) });

/** Hybrid search, as a JSON body or as query parameters. */
export const SEARCH_REQUEST: JsonSchema = input({
  query: text('What to look for.'),
  limit: int('Number of results (default 5).'),
  wing: str('Only drawers in this wing.'), room: str('Only drawers in this room.'), source_file: str('Only drawers whose stored source path equals this.'),
  since: str('Only drawers filed at or after this date or instant.'), before: str('Only drawers filed before this date or instant.'),
  max_distance: { type: 'number', minimum: 0, description: 'Drop hits farther than this cosine distance; 0 = off (default).' },
  candidate_strategy: str('"union" (default) adds BM25 candidates to the vector ones; "vector" uses vectors only.', { enum: [...CANDIDATE_STRATEGIES] }),
}, ['query']);

/**
 * Rules of the search beyond its schema (core/validate.ts): wing and room filters are names, a
 * date bound is a real calendar date or instant, and since < before.
 */
export const SEARCH_RULES = [...NAME_RULES, 'iso_date_or_datetime', 'window_order'] as const;

export const ADD_SOURCE_REQUEST: JsonSchema = input({
  location: text('A git repository URL (https, ssh, scp-like, file), or a directory; with ref always a repository.'),
  ref: text('Branch or tag to follow (git; default main).'),
  wing: text('Target wing (default: derived from the source).'),
  mode: str('What the source holds.', { enum: [...MINE_MODES], default: 'projects' }),
}, ['location']);

/** Rules of a source registration beyond its schema: the source resolver's (palace/sources.ts), and the wing is a name. */
export const ADD_SOURCE_RULES = [...SOURCE_RULES, ...NAME_RULES] as const;
