/**
 * The MCP resources of a palace: its taxonomy, the memory protocol, the AAAK spec, one drawer
 * and one job's progress (the last two through URI templates).
 */
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { isPalaceError } from '../core/errors.js';
import { AAAK_SPEC, PALACE_PROTOCOL } from '../core/protocol.js';
import { getDrawerOperation } from '../palace/drawers/drawers.js';
import { invoke } from '../palace/operation.js';
import type { JobProgress } from '../jobs/job.js';
import type { Runtime } from '../palace/runtime.js';
import { taxonomy } from '../palace/system/status.js';
import { progressView } from '../jobs/job.js';

const RESOURCE_TAXONOMY = 'mempalace://taxonomy';
const RESOURCE_PROTOCOL = 'mempalace://protocol';
const RESOURCE_AAAK = 'mempalace://aaak-spec';
const DRAWER_PREFIX = 'mempalace://drawer/';
const JOB_PREFIX = 'mempalace://job/';

export async function listResources(runtime: Runtime) {
  const jobs = await runtime.jobs.list(20).catch(() => [] as JobProgress[]);
  return {
    resources: [
      { uri: RESOURCE_TAXONOMY, name: 'taxonomy', title: 'Palace taxonomy', description: 'Wing → room → drawer count.', mimeType: 'application/json' },
      { uri: RESOURCE_PROTOCOL, name: 'protocol', title: 'Memory protocol', description: 'When to read and write the palace.', mimeType: 'text/plain' },
      { uri: RESOURCE_AAAK, name: 'aaak-spec', title: 'AAAK dialect', description: 'The compact note format for diary entries.', mimeType: 'text/plain' },
      ...jobs.map((j) => ({ uri: `${JOB_PREFIX}${j.job_id}`, name: `job-${j.job_id}`, title: `${j.kind} job (${j.state})`, mimeType: 'application/json' })),
    ],
  };
}

export function listResourceTemplates() {
  return {
    resourceTemplates: [
      { uriTemplate: `${DRAWER_PREFIX}{drawer_id}`, name: 'drawer', title: 'Drawer', description: 'One drawer with its full content and metadata.',
        mimeType: 'application/json' },
      { uriTemplate: `${JOB_PREFIX}{job_id}`, name: 'job', title: 'Job progress', description: 'Progress of a mine, sync or delete_by_source job.',
        mimeType: 'application/json' },
    ],
  };
}

export async function readResource(runtime: Runtime, uri: string) {
  const json = (value: unknown) => ({ contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(value, null, 2) }] });
  const text = (value: string) => ({ contents: [{ uri, mimeType: 'text/plain', text: value }] });
  if (uri === RESOURCE_TAXONOMY) return json({ taxonomy: await taxonomy(runtime.stores.drawers) });
  if (uri === RESOURCE_PROTOCOL) return text(PALACE_PROTOCOL);
  if (uri === RESOURCE_AAAK) return text(AAAK_SPEC);
  try {
    if (uri.startsWith(DRAWER_PREFIX))
      return json(await invoke(getDrawerOperation, { drawer_id: decodeURIComponent(uri.slice(DRAWER_PREFIX.length)) }, runtime.drawerContext, undefined));
    if (uri.startsWith(JOB_PREFIX)) return json(progressWithResult(await runtime.jobs.progress(decodeURIComponent(uri.slice(JOB_PREFIX.length)))));
  } catch (e) {
    if (isPalaceError(e) && e.code === 'not_found') throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
    throw e;
  }
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
}

/** A job resource shows the whole progress record, with the result once finished. */
function progressWithResult(p: JobProgress): Record<string, unknown> {
  return p.result === undefined ? progressView(p) : { ...progressView(p), result: p.result };
}
