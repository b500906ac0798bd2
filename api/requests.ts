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

/** `GET /v1/audit`: the trail filtered by identity, wing, tool, session and time, newest first. */
export const AUDIT_QUERY: JsonSchema = input({
  identity: text('Only writes made for this agent.'),
  wing: text('Only writes that touched this wing.'),
  tool: text('Only this tool or route, as recorded (mempalace_add_drawer, POST /v1/jobs/mine, cli mine).'),
  session: text('Only writes of this session.'),
  since: text('Only writes at or after this ISO 8601 date or instant.'),
  until: text('Only writes before this ISO 8601 date or instant.'),
  limit: int('How many (default 100).', { minimum: 1, maximum: 10_000 }),
});
