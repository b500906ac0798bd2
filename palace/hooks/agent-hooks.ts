/**
 * What an agent-host hook (Claude Code, Codex) decides, without running it: read the host's
 * hook JSON, read the transcript, compare with what this session already filed (its state file
 * under `<home>/hook_state/`), and plan the save. The CLI runs the plan inline (embedded) or
 * enqueues it (cluster), then commits the state, so the same transcript state files once.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { conversationRoom } from '../../core/chat/room.js';
import type { Harness } from '../../core/chat/session.js';
import { readSession } from '../../core/chat/session.js';
import { invalidArgument } from '../../core/errors.js';
import { loadProjectConfig } from '../sources/project-config.js';
import { hashN } from '../../core/text.js';
import { wingSlug } from '../../core/validate.js';
import type { CheckpointInput } from '../drawers/checkpoint.js';
import type { AutoSave, SessionSave } from './session-save.js';

export const HOOK_NAMES = ['session-start', 'stop', 'precompact', 'session-end'] as const;
export type HookName = (typeof HOOK_NAMES)[number];

/** The fields of the host's hook JSON the hooks read (both hosts use these names). */
export interface HookInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
  hook_event_name: string;
  stop_hook_active: boolean;
}

/** Tolerant: missing or mistyped fields become empty, so a hook never fails on the host's input. */
export function parseHookInput(raw: string): HookInput {
  let data: Record<string, unknown> = {};
  try {
    const parsed: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
  } catch {
    throw invalidArgument('stdin', 'json', 'the hook input on stdin is not a JSON object');
  }
  const text = (k: string) => (typeof data[k] === 'string' ? (data[k] as string) : '');
  const active = data.stop_hook_active;
  return {
    session_id: text('session_id'),
    transcript_path: text('transcript_path'),
    cwd: text('cwd'),
    hook_event_name: text('hook_event_name'),
    stop_hook_active: active === true || (typeof active === 'string' && ['true', '1', 'yes'].includes(active.toLowerCase())),
  };
}

/** The diary agent of a host: a Claude Code session reads its diary as `claude`. */
export function hookAgent(harness: Harness): string {
  return harness === 'claude-code' ? 'claude' : harness;
}

/** The project's wing: from mempalace.yaml in the working directory, else its folder's slug. */
export async function projectWing(cwd: string): Promise<string> {
  if (cwd === '') return 'wing_sessions';
  try {
    return (await loadProjectConfig(cwd)).wing;
  } catch {
    return wingSlug(path.basename(path.resolve(cwd)));
  }
}

export interface SessionState {
  /** Exchanges filed so far: the next save starts at this position. */
  filed_exchanges: number;
  /** Human messages in the transcript at the last save (the stop hook's interval counts from here). */
  human_at_save: number;
  /** The session's room, fixed at its first save. */
  room?: string;
  saved_at?: string;
}

function stateFile(home: string, harness: Harness, sessionId: string): string {
  const safe = sessionId.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return path.join(home, 'hook_state', `${harness}_${safe}_${hashN(sessionId, 8)}.json`);
}

export async function readSessionState(home: string, harness: Harness, sessionId: string): Promise<SessionState> {
  try {
    const parsed = JSON.parse(await fs.readFile(stateFile(home, harness, sessionId), 'utf8')) as Partial<SessionState>;
    return {
      filed_exchanges: Number.isInteger(parsed.filed_exchanges) ? parsed.filed_exchanges! : 0,
      human_at_save: Number.isInteger(parsed.human_at_save) ? parsed.human_at_save! : 0,
      ...(typeof parsed.room === 'string' ? { room: parsed.room } : {}),
      ...(typeof parsed.saved_at === 'string' ? { saved_at: parsed.saved_at } : {}),
    };
  } catch {
    return { filed_exchanges: 0, human_at_save: 0 };
  }
}

export async function writeSessionState(home: string, harness: Harness, sessionId: string, state: SessionState): Promise<void> {
  const file = stateFile(home, harness, sessionId);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.writeFile(tmp, `${JSON.stringify(state)}\n`);
  await fs.rename(tmp, file);
}

export interface SavePlan {
  /** Why nothing is to be filed, when nothing is. */
  skip?: 'no_transcript' | 'not_due' | 'nothing_new';
  humanMessages: number;
  newHumanMessages: number;
  state: SessionState;
  /** The auto-save to run (absent when skipped) and the state to commit once it is filed. */
  job?: AutoSave & { agent: string; sessionId: string; messages: number };
  next?: SessionState;
}

/**
 * `interval` = the stop hook's: due once that many human messages came since the last save;
 * `undefined` = precompact and session-end: everything answered and not yet filed.
 */
export async function planSessionSave(home: string, harness: Harness, input: HookInput, interval: number | undefined, now: Date): Promise<SavePlan> {
  const state = await readSessionState(home, harness, input.session_id);
  if (input.transcript_path === '') return { skip: 'no_transcript', humanMessages: 0, newHumanMessages: 0, state };
  let content: string;
  try {
    content = await fs.readFile(input.transcript_path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { skip: 'no_transcript', humanMessages: 0, newHumanMessages: 0, state };
    throw e;
  }
  const session = readSession(content, harness);
  const newHuman = session.humanMessages - state.human_at_save;
  const base = { humanMessages: session.humanMessages, newHumanMessages: newHuman, state };
  if (interval !== undefined && newHuman < interval) return { ...base, skip: 'not_due' };
  const fresh = session.exchanges.filter((e) => e.index >= state.filed_exchanges && e.answered);
  if (fresh.length === 0) return { ...base, skip: 'nothing_new' };

  const wing = await projectWing(input.cwd);
  const room = state.room ?? conversationRoom(session.exchanges.map((e) => e.text).join('\n\n'));
  const agent = hookAgent(harness);
  const save: SessionSave = {
    harness,
    sessionId: input.session_id,
    agent,
    wing,
    room,
    sourceFile: input.transcript_path,
    exchanges: fresh.map((e) => ({ index: e.index, text: e.text })),
  };
  const last = fresh[fresh.length - 1]!.index + 1;
  return {
    ...base,
    job: { agent, sessionId: input.session_id, messages: session.humanMessages, session: save, checkpoint: saveCheckpoint(save, session.humanMessages, fresh) },
    next: { filed_exchanges: last, human_at_save: session.humanMessages, room, saved_at: now.toISOString() },
  };
}

/** The diary entry of a save, naming the exchanges it filed (a budgeted run may file the first part only). */
export function saveCheckpoint(save: SessionSave, humanMessages: number, filed: readonly { index: number }[]): CheckpointInput {
  const first = filed[0]!.index + 1;
  const last = filed[filed.length - 1]!.index + 1;
  const entry =
    `Auto-save of ${save.harness} session ${save.sessionId}: exchanges ${first}–${last} (${filed.length}) filed verbatim in ${save.wing}/${save.room}; ${humanMessages} human messages so far.`;
  return { items: [], added_by: save.agent, diary: { agent_name: save.agent, entry, topic: 'session-checkpoint', wing: save.wing } };
}
