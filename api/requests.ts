/**
 * The request models of the REST routes that are neither jobs (jobs/requests.ts) nor
 * bindings of palace operations (api/bind.ts): the routes validate with these objects (api/validate.ts) and the
 * OpenAPI document's request bodies and query parameters are generated from them.
 */
import type { JsonSchema } from '../core/schema.js';
import { input, int, str, text } from '../core/schema.js';
import { NAME_RULES } from '../core/validate.js';
import { MINE_MODES } from '../jobs/job.js';
import { SOURCE_RULES } from '../palace/sources/sources.js';

/** `?limit=` of the job, source and notification lists. */
export const LIST_QUERY: JsonSchema = input({ limit: int('How many (default 20).', { minimum: 1, maximum: 200 }) });

export const ADD_SOURCE_REQUEST: JsonSchema = input({
  location: text('A git repository URL (https, ssh, scp-like, file), or a directory; with ref always a repository.'),
  ref: text('Branch or tag to follow (git; default main).'),
  wing: text('Target wing (default: derived from the source).'),
  mode: str('What the source holds.', { enum: [...MINE_MODES], default: 'projects' }),
}, ['location']);

/** Rules of a source registration beyond its schema: the source resolver's (palace/sources/sources.ts), and the wing is a name. */
export const ADD_SOURCE_RULES = [...SOURCE_RULES, ...NAME_RULES] as const;
