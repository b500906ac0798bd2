/**
 * The SDK wiring: one low-level `Server` of @modelcontextprotocol/sdk over the palace's MCP
 * state, with our own handlers for tools, resources and client roots — one per stdio session,
 * or one per stateless HTTP request.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context } from '@opentelemetry/api';
import { context, propagation } from '@opentelemetry/api';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError,
  ReadResourceRequestSchema, RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../core/caller.js';
import { PalaceError } from '../core/errors.js';
import { progressRelay } from './progress.js';
import { listResourceTemplates, listResources, readResource } from './resources.js';
import type { McpService } from './types.js';

export function createSdkServer(mcp: McpService, caller?: Caller): Server {
  const server = new Server(
    { name: 'mempalace', version: mcp.version },
    {
      capabilities: { tools: { listChanged: false }, resources: {} },
      instructions: 'MemPalace is your long-term memory. Call mempalace_status on wake-up: it returns the memory protocol to follow and the AAAK note dialect.',
    },
  );
  let roots: string[] | undefined;
  let rootsKnown = false;
  // Roots fail closed: a client that declares the capability bounds its sources by the list it
  // gives (an empty list allows none); a failing roots/list refuses the call.
  const clientRoots = async (): Promise<string[] | undefined> => {
    if (rootsKnown) return roots;
    if (!server.getClientCapabilities()?.roots) return undefined;
    try {
      const listed = await server.listRoots(undefined, { timeout: 5000 });
      roots = listed.roots.filter((r) => r.uri.startsWith('file://')).map((r) => path.resolve(fileURLToPath(r.uri)));
      rootsKnown = true;
      return roots;
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      mcp.log.warn(`mempalace mcp: could not list the client's roots: ${reason}`);
      throw new PalaceError('permission_denied',
        `the client declares roots but roots/list failed (${reason}); no source can be checked against them, so the call is refused`, { rule: 'client_roots' });
    }
  };
  server.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
    rootsKnown = false;
  });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    refuseCursor(request.params?.cursor);
    return { tools: mcp.listTools() };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const token = request.params._meta?.progressToken;
    const onJobProgress = token === undefined ? undefined : progressRelay(token, (n) => extra.sendNotification(n));
    return context.with(callerTraceContext(request.params._meta),
      () =>
        mcp.callTool(request.params.name, request.params.arguments, { caller, signal: extra.signal, onJobProgress, clientRoots,
          requestId: String(extra.requestId) }));
  });
  server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    refuseCursor(request.params?.cursor);
    return listResources(mcp.runtime);
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (request) => {
    refuseCursor(request.params?.cursor);
    return listResourceTemplates();
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => readResource(mcp.runtime, request.params.uri));
  return server;
}

/**
 * The trace a tool call continues: the caller's, when `params._meta` carries W3C trace context
 * (`traceparent`, `tracestate`; the OpenTelemetry MCP conventions), which then parents the
 * tools/call span even over HTTP; otherwise the active one (the HTTP server span, or none on stdio).
 */
function callerTraceContext(meta: Record<string, unknown> | undefined): Context {
  if (typeof meta?.traceparent !== 'string') return context.active();
  return propagation.extract(context.active(), meta);
}

/** The lists fit in one page, so no cursor this server handed out exists. */
function refuseCursor(cursor: string | undefined): void {
  if (cursor !== undefined) throw new McpError(ErrorCode.InvalidParams, `Invalid params: unknown cursor '${cursor}' (this list has a single page)`);
}
