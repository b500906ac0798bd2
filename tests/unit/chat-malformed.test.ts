import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkConversation } from '../../core/chat/conversation.js';
import { chunkExchanges } from '../../core/chat/exchange.js';
import { extractGeneralMemories } from '../../core/chat/general.js';
import { MAX_CONVERSATION_BYTES, normaliseConversation } from '../../core/chat/normalise.js';
import { isPalaceError } from '../../core/errors.js';

describe('malformed conversation input never crashes', () => {
  it('truncated JSON is filed as plain text with a json-not-recognised note', () => {
    const text = '{"chat_messages": [{"sender": "human", "text": "Why is the bui';
    const result = normaliseConversation(text, 'conversation.json');
    expect(result).toEqual({ format: 'plain-text', transcript: text, messageCount: 0, notes: ['json-not-recognised'] });
  });

  it.each([
    ['an object of the wrong shape', '{"foo": 1, "bar": [1, 2]}'],
    ['an array of numbers', '[1, 2, 3]'],
    ['a conversation with one message', '{"messages": [{"role": "user", "content": "hello there"}]}'],
    ['JSONL of unknown entries', '{"type":"x"}\n{"type":"y"}\nnot json at all'],
    ['a ChatGPT mapping with a cycle',
      '{"mapping": {"a": {"parent": null, "children": ["b"], "message": null}, "b": {"parent": "a", "children": ["a"], "message": {"author": {"role": "user"}, "content": {"parts": ["loop"]}}}}}'],
    ['null', 'null'],
  ])('%s is filed as plain text', (_label, text) => {
    const result = normaliseConversation(text, 'x.json');
    expect(result.format).toBe('plain-text');
    expect(result.notes).toEqual(['json-not-recognised']);
    expect(result.transcript).toBe(text);
  });

  it('non-UTF-8 bytes are replaced with U+FFFD and noted', () => {
    const latin1 = Buffer.from('Caf\xe9 notes: the d\xe9ploiement failed twice before lunch.', 'latin1');
    const result = normaliseConversation(latin1, 'notes.txt');
    expect(result.format).toBe('plain-text');
    expect(result.notes).toEqual(['invalid-utf8-replaced']);
    expect(result.transcript).toBe('Caf\uFFFD notes: the d\uFFFDploiement failed twice before lunch.');
  });

  it('an invalid byte inside a JSONL string still parses, with the note', () => {
    const head = Buffer.from('{"type":"user","message":{"content":"caf');
    const tail = Buffer.from(' question"}}\n{"type":"assistant","message":{"content":"an answer"}}\n');
    const result = normaliseConversation(Buffer.concat([head, Buffer.from([0xc3, 0x28]), tail]), 's.jsonl');
    expect(result.format).toBe('claude-code-jsonl');
    expect(result.notes).toEqual(['invalid-utf8-replaced']);
    expect(result.transcript).toBe('> caf\uFFFD( question\nan answer\n');
  });

  it('a file over 500 MiB is refused with a structured too_large error', () => {
    const huge = Buffer.allocUnsafe(MAX_CONVERSATION_BYTES + 1);
    let caught: unknown;
    try {
      normaliseConversation(huge, 'huge.jsonl');
    } catch (e) {
      caught = e;
    }
    expect(isPalaceError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'too_large', field: 'source_file', rule: 'max_bytes' });
    expect(chunkConversation(huge, 'huge.jsonl')).toMatchObject({ status: 'skipped', reason: 'too_large' });
  });

  it('arbitrary bytes never throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.constantFrom('a.json', 'a.jsonl', 'a.txt'), (bytes, name) => {
        const result = chunkConversation(bytes, name, 'exchange', { chunkSize: 50, minChunkSize: 5 });
        expect(['ok', 'skipped']).toContain(result.status);
      }),
      { numRuns: 300 },
    );
  });

  it('arbitrary JSON values and JSONL never throw, and every chunk respects the size', () => {
    const entry = fc.record({
      type: fc.constantFrom('user', 'human', 'assistant', 'session_meta', 'event_msg', 'session_metadata', 'gemini', 'message'),
      message: fc.jsonValue(),
      payload: fc.jsonValue(),
      content: fc.jsonValue(),
    });
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue().map((v) => JSON.stringify(v)), fc.array(entry).map((es) => es.map((e) => JSON.stringify(e)).join('\n'))), (text) => {
        const result = chunkConversation(text, 'x.jsonl', 'exchange', { chunkSize: 40, minChunkSize: 3 });
        if (result.status === 'ok') { for (const c of result.chunks) expect([...c.content].length).toBeLessThanOrEqual(40); }
      }),
      { numRuns: 300 },
    );
  });

  it('the chunkers accept any string, including lone surrogates', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 }), (a, b) => {
        const text = `${a}\n> ${b}\n\n${a}`;
        chunkExchanges(text, { chunkSize: 30, minChunkSize: 2 });
        extractGeneralMemories(text, { chunkSize: 30, minChunkSize: 2 });
      }),
      { numRuns: 300 },
    );
  });
});
