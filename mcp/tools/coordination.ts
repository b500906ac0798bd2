/**
 * Coordination tools over the logstream (docs/tools.md §8): tasks, events, waits, acks, artifacts,
 * patches and the mesh estate, bound to their operations (palace/logstream/operations.ts). They
 * never touch the drawer index, so they keep working while it is unavailable.
 */
import { artifactGetOperation, artifactPutOperation, eventAckOperation, eventAppendOperation, eventListOperation, eventWaitOperation, meshPeersOperation,
  patchSubmitOperation, taskCreateOperation } from '../../palace/logstream/operations.js';
import type { TObject, TSchema } from 'typebox';
import type { LogstreamContext } from '../../palace/logstream/logstream.js';
import type { Operation } from '../../palace/operation.js';
import { toolOf } from '../bind.js';
import type { ToolDef } from '../types.js';

/** The logstream operations take no binding options. */
type LogstreamOperation = Operation<TObject, TSchema, LogstreamContext>;

/** A logstream write: refused read-only, allowed to peer writers, stamped with the caller in `agentField`. */
const write = (op: LogstreamOperation, agentField: string, description: string): ToolDef =>
  toolOf(op, { description, guards: { mutating: true, peerWriterExempt: true, integritySafe: true, readOnlyRefused: true }, errorShape: 'success_false',
    agentFields: [agentField] });
const read = (op: LogstreamOperation, description: string): ToolDef => toolOf(op, { description, guards: { integritySafe: true }, errorShape: 'error' });

export const coordinationTools: ToolDef[] = [
  write(taskCreateOperation, 'from_agent',
    'Delegate work to another agent: creates one complete task.request (goal, definition of done, branch, base commit) in stream project/<project> and returns the stored event plus a one-line handoff to give the worker. Show the exact task to the user first; events are immutable.'),
  write(eventAppendOperation, 'from_agent',
    'Append one immutable coordination event (task.reply, patch.ready, status …) to a stream and room, optionally addressed to an agent (or * for all) and tied to a correlation id. Returns the stored event with its id and seq.'),
  read(eventListOperation,
    'List events with filters (all combined with AND), oldest first by default — the inbox sweep and history tool. Resume with since_event_id = the last id you processed; page backwards with before_event_id and order desc. preview true shortens long bodies.'),
  read(eventWaitOperation,
    'Wait (up to timeout_ms, default 60 s, max 5 min) until at least one matching event exists, then return the matches oldest first. A timeout is a normal result (timed_out: true): call again with since_event_id advanced, never in a tight loop.'),
  write(eventAckOperation, 'from_agent',
    'Acknowledge an event (claimed, applied, failed …) by appending an event.ack routed back to its writer with the same correlation id; the original is never modified.'),
  write(artifactPutOperation, 'created_by',
    "Store exact content (a patch, file, log, JSON or note, up to 4 MiB) for a handoff and get its id and sha256; cite the id in an event's artifact_ids. For a patch plus its patch.ready event in one call use mempalace_patch_submit."),
  read(artifactGetOperation, "Fetch an artifact's exact content and metadata by id. Verify the content against its sha256 before applying it."),
  write(patchSubmitOperation, 'from_agent',
    'Deliver a unified diff: stores it as a patch artifact and appends its patch.ready event (status ready, room patches by default) in one call. Tie it to the task with correlation_id.'),
  read(meshPeersOperation,
    'The mesh as this replica sees it: its replica id, version vector and profile, the configured peers with their last sync outcome and lag (lag_events, lag_s), and origins it holds events from. Never includes tokens.'),
];
