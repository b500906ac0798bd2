import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normaliseConversation } from '../../core/chat/normalise.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/chat/${name}`, import.meta.url));

interface FormatCase {
  title: string;
  file: string;
  name: string;
  format: string;
  messages?: number;
  transcript: string[];
  absent?: string[];
}

// One row per export format: the fixture, the name it is filed under, and the transcript it must give.
const FORMAT_CASES: FormatCase[] = [
  {
    title: 'Claude Code JSONL: tool calls summarised, results trimmed by tool, noise stripped, truncated line skipped',
    file: 'claude-code-session.jsonl',
    name: 'claude-code-session.jsonl',
    format: 'claude-code-jsonl',
    messages: 6,
    transcript: [
      '> Why does the nightly export job fail with ECONNRESET? 🤔',
      "Let me look at the job's log first.",
      '[Bash] tail -n 3 logs/export.log',
      '→ 02:00:01 export started',
      '→ 02:00:31 upstream closed connection: ECONNRESET',
      '→ 02:00:31 export aborted after 30000 ms',
      '[Read /home/mira/src/ledger/jobs/export.ts:40-65]',
      'The client gives up after 30 s, but the upstream needs about 90 s for the May partition. Raising the timeout should fix it.',
      '[Edit /home/mira/src/ledger/jobs/export.ts]',
      '',
      '> Great. Where else do we call the export endpoint? 日本語のレポートも確認して',
      '[Grep] exportUrl in src/',
      '→ src/jobs/export.ts',
      '→ src/reports/ja/月次レポート.ts',
      '[TodoWrite] {"todos":[{"content":"Raise timeout in monthly report","status":"pending"}]}',
      'Two callers: the export job and the monthly Japanese report (月次レポート). I will raise the timeout there too.',
      '',
      '> Thanks, ship it 🚀',
      'Done: both timeouts are now 120 s.',
      '',
    ],
  },
  {
    title: 'Codex CLI JSONL: only event_msg user/agent messages, blank ones dropped',
    file: 'codex-rollout.jsonl',
    name: 'rollout-2026-04-18.jsonl',
    format: 'codex-jsonl',
    messages: 4,
    transcript: [
      '> The tile cache grows without bound. Can you cap it at 512 entries with LRU eviction?',
      '`TileCache` wraps a plain `HashMap`. I replaced it with an `lru::LruCache` capped at 512 entries and added a test that inserts 600 tiles and checks the oldest 88 were evicted.',
      '',
      '> Does eviction count as a cache miss in the metrics? Ça compte pour le tableau de bord.',
      'No: evictions have their own counter, `tiles_evicted_total`, so the hit ratio on the dashboard is unchanged.',
      '',
    ],
  },
  {
    title: 'Gemini CLI JSONL: entries before session_metadata ignored, blank blocks skipped',
    file: 'gemini-session.jsonl',
    name: 'session.jsonl',
    format: 'gemini-jsonl',
    transcript: [
      '> Summarise what changed in the billing schema between v3 and v4.',
      'Two changes:',
      '1. `invoices.currency` became a three-letter ISO code instead of a symbol (€ → EUR).',
      '2. `line_items` gained a `tax_rate` column.',
      '',
      '> Is the migration reversible?',
      'Yes, the down migration maps ISO codes back to symbols; unknown codes fall back to the code itself.',
      '',
    ],
    absent: ['left over'],
  },
  {
    title: 'Claude.ai single conversation: chat_messages, content blocks first, text as fallback',
    file: 'claude-ai-conversation.json',
    name: 'conversation.json',
    format: 'claude-ai-json',
    messages: 4,
    transcript: [
      '> We retry failed webhooks with setTimeout today. Should we move to a real queue?',
      'Yes. Timers die with the process, so a deploy silently drops every pending retry.',
      '',
      'A queue with delayed jobs (for example BullMQ on the Redis you already run) keeps retries across restarts and lets you cap attempts with exponential backoff.',
      '',
      '> How many attempts would you allow? Our partners in 東京 are often offline overnight.',
      'Eight attempts with backoff from 1 minute doubling to about 2 hours covers a 12-hour outage window. 🌙',
      '',
    ],
  },
  {
    title: 'Claude.ai privacy export: one transcript per conversation with ≥ 2 messages, joined by a blank line',
    file: 'claude-ai-privacy-export.json',
    name: 'conversations.json',
    format: 'claude-ai-json',
    messages: 6,
    transcript: [
      "> autovacuum can't keep up with the events table. What should I tune first?",
      'Lower autovacuum_vacuum_scale_factor for that table to 0.01 so it triggers on 1% dead rows instead of 20%.',
      '',
      '> Suggest a codename for the Q2 release, something to do with rivers.',
      '"Delta" — short, memorable, and a river\'s end is where it meets the sea.',
      '',
      '> Delta is taken by the mobile team.',
      'Then "Confluence": two streams joining, like the two services this release merges.',
      '',
    ],
    absent: ['hello?'],
  },
  {
    title: 'ChatGPT conversations.json array: first branch, system/tool dropped, parts joined with a space',
    file: 'chatgpt-conversations.json',
    name: 'conversations.json',
    format: 'chatgpt-json',
    messages: 6,
    transcript: [
      '> Why does every build reinstall all npm packages?',
      'Because `COPY . .` comes before `RUN npm ci`, any source change invalidates the install layer. Copy package.json and package-lock.json first, run npm ci, then copy the rest.',
      '',
      '> Does that also help with the pnpm store? Merci !',
      'Yes, and mount the store as a BuildKit cache: `RUN --mount=type=cache,target=/pnpm/store pnpm install --frozen-lockfile`.',
      '',
      '> Write a haiku about a failing CI pipeline 🌧️',
      'Red light at midnight',
      'the flaky test fails again',
      "retry, and it's green",
      '',
    ],
    absent: ['regenerated', 'search results omitted'],
  },
  {
    title: 'Slack export: roles alternate by speaker, blank messages skipped, provenance footer appended',
    file: 'slack-channel.json',
    name: 'general/2026-04-25.json',
    format: 'slack-json',
    messages: 6,
    transcript: [
      '> [U04PRIYA] <@U04PRIYA> has joined the channel',
      '',
      '> [U04PRIYA] Staging deploy is stuck at the migration step again.',
      "[U07OLEK] Looks like the advisory lock from the 14:00 run was never released. I'll kill that session.",
      '',
      '> [deploy-bot] ✅ staging deploy #4821 finished in 3m12s',
      '',
      "> [U04PRIYA] Thanks Olek 🙏 — can we add a lock timeout so this doesn't happen again?",
      "[U07OLEK] Yes: lock_timeout = '30s' on the migration role.",
      '',
      '[source: slack-export | multi-party chat — speaker roles are positional, not verified]',
    ],
  },
];

describe('normaliseConversation: one test per export format', () => {
  it.each(FORMAT_CASES)('$title', ({ file, name, format, messages, transcript, absent }) => {
    const result = normaliseConversation(fixture(file), name);
    expect(result.format).toBe(format);
    if (messages !== undefined) expect(result.messageCount).toBe(messages);
    expect(result.notes).toEqual([]);
    expect(result.transcript).toBe(transcript.join('\n'));
    for (const text of absent ?? []) expect(result.transcript).not.toContain(text);
  });

  it('ChatGPT single conversation object is recognised too', () => {
    const all = JSON.parse(fixture('chatgpt-conversations.json').toString('utf8')) as unknown[];
    const result = normaliseConversation(JSON.stringify(all[1]), 'haiku.json');
    expect(result.format).toBe('chatgpt-json');
    expect(result.transcript).toBe(
      "> Write a haiku about a failing CI pipeline 🌧️\nRed light at midnight\nthe flaky test fails again\nretry, and it's green\n",
    );
  });

  it('Slack speaker ids lose brackets, line breaks and control characters', () => {
    const messages = [
      { type: 'message', user: '[evil]\nname\u0007', text: 'first message here' },
      { type: 'message', user: 'U2', text: 'second message here' },
    ];
    const result = normaliseConversation(JSON.stringify(messages), 'x.json');
    expect(result.transcript.split('\n')[0]).toBe('> [_evil__name_] first message here');
  });

  it('plain text is filed unchanged', () => {
    const bytes = fixture('plain-notes.txt');
    const result = normaliseConversation(bytes, 'plain-notes.txt');
    expect(result.format).toBe('plain-text');
    expect(result.transcript).toBe(bytes.toString('utf8'));
    expect(result.notes).toEqual([]);
  });

  it('a text with three quoted lines is already a transcript and is returned unchanged', () => {
    const bytes = fixture('quoted-transcript.md');
    const result = normaliseConversation(bytes, 'review.md');
    expect(result.format).toBe('quoted-transcript');
    expect(result.transcript).toBe(bytes.toString('utf8'));
  });

  it('a JSON file with quoted lines counts as a transcript before any JSON parsing', () => {
    const text = '> a\n> b\n> c\n';
    expect(normaliseConversation(text, 'odd.json').format).toBe('quoted-transcript');
  });

  it('blank content is returned as is', () => {
    const result = normaliseConversation(' \n\t\n', 'empty.txt');
    expect(result).toEqual({ format: 'empty', transcript: ' \n\t\n', messageCount: 0, notes: [] });
  });

  it('multi-line user turns are quoted on every line', () => {
    const lines = [
      JSON.stringify({ type: 'user', message: { content: 'First line\n\nThird line' } }),
      JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'Answer' }] } }),
    ];
    const result = normaliseConversation(lines.join('\n'), 's.jsonl');
    expect(result.transcript).toBe('> First line\n>\n> Third line\nAnswer\n');
  });
});
