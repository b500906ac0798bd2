/**
 * The one table of all 45 tools, in the stable `tools/list` order of docs/tools.md §1, with their
 * schemas, guard sets, MCP annotations and compiled input validators.
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { PalaceError } from '../core/errors.js';
import { compileInput, describeViolation } from '../core/validate-input.js';
import type { JsonSchema } from './schema.js';
import { coordinationTools } from './tools/coordination.js';
import { diaryTools } from './tools/diary.js';
import { kgTools } from './tools/kg.js';
import { navigationTools } from './tools/navigation.js';
import { palaceReadTools } from './tools/palace-read.js';
import { palaceWriteTools } from './tools/palace-write.js';
import { systemTools } from './tools/system.js';
import type { ToolDef } from './types.js';

export const TOOL_ORDER = [
  'status',
  'list_wings',
  'list_rooms',
  'get_taxonomy',
  'get_aaak_spec',
  'kg_query',
  'kg_add',
  'kg_invalidate',
  'kg_supersede',
  'kg_timeline',
  'kg_stats',
  'traverse',
  'find_tunnels',
  'graph_stats',
  'mesh_peers',
  'create_tunnel',
  'list_tunnels',
  'delete_tunnel',
  'list_hallways',
  'delete_hallway',
  'follow_tunnels',
  'search',
  'check_duplicate',
  'add_drawer',
  'checkpoint',
  'delete_drawer',
  'mine',
  'delete_by_source',
  'sync',
  'get_drawer',
  'list_drawers',
  'update_drawer',
  'diary_write',
  'diary_read',
  'hook_settings',
  'memories_filed_away',
  'reconnect',
  'event_append',
  'task_create',
  'event_list',
  'event_wait',
  'event_ack',
  'artifact_put',
  'artifact_get',
  'patch_submit',
].map((n) => `mempalace_${n}`);

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface RegisteredTool extends ToolDef {
  annotations: ToolAnnotations;
  /** Checks arguments after coercion; advisory properties are left to the handler. */
  validate: ValidateFunction;
  /** Declared property name → JSON type, for unknown-key checks and coercion. */
  propertyTypes: Map<string, string | undefined>;
  required: string[];
}

/** docs/decisions.md "Tool annotations": derived from the guard sets and the tool's declared nature. */
function annotationsOf(tool: ToolDef): ToolAnnotations {
  const readOnly = !tool.guards.readOnlyRefused;
  return {
    title: tool.name.replace(/^mempalace_/, '').replaceAll('_', ' '),
    readOnlyHint: readOnly,
    destructiveHint: !readOnly && tool.destructive === true,
    idempotentHint: !readOnly && tool.idempotent === true,
    openWorldHint: tool.openWorld === true,
  };
}

function validationSchema(tool: ToolDef): JsonSchema {
  if (tool.validation) return tool.validation;
  const props = { ...((tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>) };
  for (const name of tool.advisory ?? []) props[name] = {};
  return { ...tool.inputSchema, properties: props };
}

function register(tool: ToolDef): RegisteredTool {
  const props = (tool.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  return {
    ...tool,
    annotations: annotationsOf(tool),
    validate: compileInput(validationSchema(tool)),
    propertyTypes: new Map(Object.entries(props).map(([k, s]) => [k, typeof s.type === 'string' ? s.type : undefined])),
    required: (tool.inputSchema.required as string[] | undefined) ?? [],
  };
}

function buildRegistry(): RegisteredTool[] {
  const all = [...palaceReadTools, ...palaceWriteTools, ...kgTools, ...navigationTools, ...diaryTools, ...systemTools, ...coordinationTools];
  const byName = new Map(all.map((t) => [t.name, t]));
  if (byName.size !== all.length || all.length !== TOOL_ORDER.length) throw new Error(`tool table holds ${all.length} tools, expected ${TOOL_ORDER.length}`);
  return TOOL_ORDER.map((name) => {
    const tool = byName.get(name);
    if (!tool) throw new Error(`tool table is missing ${name}`);
    return register(tool);
  });
}

export const TOOLS: readonly RegisteredTool[] = buildRegistry();
export const TOOLS_BY_NAME: ReadonlyMap<string, RegisteredTool> = new Map(TOOLS.map((t) => [t.name, t]));

/** A schema violation of a tool's arguments, as REST and the CLI report the same field (core/validate-input.ts). */
export function validationError(tool: RegisteredTool, err: ErrorObject): PalaceError {
  return describeViolation(err, { where: 'arguments', enumMessages: tool.enumMessages });
}
