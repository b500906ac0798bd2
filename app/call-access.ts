/**
 * Per-wing access (issue 28): the runtime a caller with wing grants sees. Every port a tool or
 * route can reach through the runtime is wrapped (app/access/): the drawer store (also as the
 * drawer operations' context), the graph store, registered sources and their refreshes, the job
 * engine, and the drawer count the mesh profile reports. Reads are filtered to readable wings;
 * writes to other wings are refused before anything is written or started.
 *
 * Every HTTP caller that is not admin may change a diary entry only as its agent
 * (app/access/diary-owners.ts). No caller (stdio MCP, the CLI, hooks: the local user) and an
 * admin caller see the runtime unchanged. The logstream is not per wing (README "Security model").
 */
import type { Caller } from '../core/caller.js';
import type { Call } from '../palace/call.js';
import type { Runtime } from '../palace/runtime.js';
import type { WingGrants } from '../core/wing-grants.js';
import { WingView } from './access/wing-view.js';
import { diaryOwnedDrawers } from './access/diary-owners.js';
import { grantedDrawers } from './access/granted-drawers.js';
import { grantedGraph } from './access/granted-graph.js';
import { grantedJobs } from './access/granted-jobs.js';
import { grantedRefresh, grantedSources } from './access/granted-sources.js';

/** The grants that restrict this caller, if any: an admin sees every wing. */
export function restrictingGrants(caller: Caller | undefined): WingGrants | undefined {
  if (!caller?.wings || caller.scopes.includes('admin')) return undefined;
  return caller.wings;
}

export function callAccess(rt: Runtime, call: Call): Runtime {
  const caller = call.caller;
  if (!caller || caller.scopes.includes('admin')) return rt;
  const owned = diaryOwnedDrawers(rt.stores.drawers, caller.identity);
  const grants = restrictingGrants(caller);
  if (!grants) return { ...rt, stores: { ...rt.stores, drawers: owned }, drawerContext: { ...rt.drawerContext, drawers: owned } };
  const view = new WingView(caller.identity, grants, rt.stores.drawers);
  const drawers = grantedDrawers(owned, view);
  const mesh = rt.logstreamContext.mesh;
  const facts = mesh?.nodeFacts;
  return {
    ...rt,
    stores: { ...rt.stores, drawers, graph: grantedGraph(rt.stores.graph, view), sources: grantedSources(rt.stores.sources, view) },
    drawerContext: { ...rt.drawerContext, drawers },
    jobs: grantedJobs(rt.jobs, rt.stores.jobs, view),
    refresh: grantedRefresh(rt.refresh, view),
    logstreamContext: {
      ...rt.logstreamContext,
      // The mesh profile reports the drawers this caller can see, not the palace's total.
      ...(mesh && facts ? { mesh: { ...mesh, nodeFacts: async () => ({ ...(await facts()), drawers: await drawers.count() }) } } : {}),
    },
  };
}
