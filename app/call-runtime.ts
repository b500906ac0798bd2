/**
 * The runtime one call sees (`Runtime.forCall`). The wrappers that depend on the caller are
 * applied here and nowhere else, so no tool or route can reach a port without them.
 */
import type { Call } from '../palace/call.js';
import type { Runtime } from '../palace/runtime.js';
import { callAccess } from './call-access.js';
import { auditedRuntime, callIdentity } from './call-audit.js';

export function callRuntime(rt: Runtime, call: Call): Runtime {
  // Access outside: a refused write is refused before the audit recorder sees it.
  const view = callAccess(auditedRuntime(rt, call), call);
  return { ...view, drawerContext: { ...view.drawerContext, actor: callIdentity(rt, call) } };
}
