/**
 * RTF to plain text (docs/palace-behaviour.md §6). The bytes are decoded as UTF-8, else Windows-1252, else UTF-8
 * with replacement; then an RTF stripper keeps the text runs and drops formatting, font and
 * colour tables, metadata and embedded pictures. No maintained npm package strips general RTF
 * (the RTF packages target Outlook-encapsulated HTML or render to a DOM), so this is a small
 * tokenizer over the control words that carry text.
 */
import { TextDecoder } from 'node:util';
import type { DocumentMetadata, ExtractedDocument } from './types.js';

/** Groups whose content is not document text. */
const SKIPPED_DESTINATIONS = new Set([
  'fonttbl',
  'colortbl',
  'stylesheet',
  'info',
  'pict',
  'object',
  'objdata',
  'header',
  'headerl',
  'headerr',
  'headerf',
  'footer',
  'footerl',
  'footerr',
  'footerf',
  'listtable',
  'listoverridetable',
  'generator',
  'themedata',
  'colorschememapping',
  'datastore',
  'latentstyles',
  'rsidtbl',
  'xmlnstbl',
  'mmathPr',
  'filetbl',
  'revtbl',
  'pgdsctbl',
  'fldinst',
  'bkmkstart',
  'bkmkend',
  'xe',
  'tc',
  'private',
  'operator',
  'company',
  'title',
  'author',
  'keywords',
  'comment',
  'doccomm',
  'subject',
  'category',
  'manager',
  'creatim',
  'revtim',
  'printim',
  'buptim',
]);

const SYMBOL_WORDS: Readonly<Record<string, string>> = {
  par: '\n',
  line: '\n',
  sect: '\n\n',
  page: '\n\n',
  row: '\n',
  tab: '\t',
  cell: '\t',
  emdash: '—',
  endash: '–',
  bullet: '•',
  lquote: '‘',
  rquote: '’',
  ldblquote: '“',
  rdblquote: '”',
  emspace: ' ',
  enspace: ' ',
  qmspace: ' ',
};

const DBCS_CODEPAGES: Readonly<Record<number, string>> = { 932: 'shift_jis', 936: 'gbk', 949: 'euc-kr', 950: 'big5' };

// Bytes 0x80–0x9F of Windows-1252 (0 = undefined). Node 20's TextDecoder decodes the
// `windows-1252` label as Latin-1, so this range is mapped here.
const CP1252_HIGH = [
  0x20ac,
  0,
  0x201a,
  0x0192,
  0x201e,
  0x2026,
  0x2020,
  0x2021,
  0x02c6,
  0x2030,
  0x0160,
  0x2039,
  0x0152,
  0,
  0x017d,
  0,
  0,
  0x2018,
  0x2019,
  0x201c,
  0x201d,
  0x2022,
  0x2013,
  0x2014,
  0x02dc,
  0x2122,
  0x0161,
  0x203a,
  0x0153,
  0,
  0x017e,
  0x0178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += String.fromCharCode(b >= 0x80 && b <= 0x9f ? CP1252_HIGH[b - 0x80] || 0xfffd : b);
  return out;
}

type ByteDecoder = (bytes: Uint8Array) => string;

function decoderFor(codepage: number): ByteDecoder {
  if (codepage === 1252) return decodeWindows1252;
  const label = DBCS_CODEPAGES[codepage] ?? `windows-${codepage}`;
  try {
    const decoder = new TextDecoder(label);
    return (bytes) => decoder.decode(bytes);
  } catch {
    return decodeWindows1252;
  }
}

function hasUndefinedCp1252Byte(bytes: Uint8Array): boolean {
  return bytes.some((b) => b >= 0x80 && b <= 0x9f && CP1252_HIGH[b - 0x80] === 0);
}

export function decodeRtfBytes(bytes: Uint8Array): { text: string; encoding: NonNullable<DocumentMetadata['encoding']> } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), encoding: 'utf-8' };
  } catch {
    // Python's cp1252 codec fails on the five undefined bytes; then UTF-8 with replacement.
    if (!hasUndefinedCp1252Byte(bytes)) return { text: decodeWindows1252(bytes), encoding: 'windows-1252' };
    return { text: new TextDecoder('utf-8').decode(bytes), encoding: 'utf-8-replaced' };
  }
}

interface GroupState {
  skip: boolean;
  unicodeSkip: number;
}

export function stripRtf(rtf: string): string {
  if (!rtf.trimStart().startsWith('{\\rtf')) throw new Error('not an RTF file: it does not start with {\\rtf');
  const stack: GroupState[] = [];
  let state: GroupState = { skip: false, unicodeSkip: 1 };
  let decoder = decoderFor(1252);
  let out = '';
  let pendingBytes: number[] = [];
  let fallbackToSkip = 0;

  const flushBytes = (): void => {
    if (pendingBytes.length === 0) return;
    out += decoder(new Uint8Array(pendingBytes));
    pendingBytes = [];
  };
  const emit = (text: string): void => {
    if (state.skip) return;
    if (fallbackToSkip > 0) {
      fallbackToSkip--;
      return;
    }
    flushBytes();
    out += text;
  };

  let i = 0;
  while (i < rtf.length) {
    const ch = rtf[i]!;
    if (ch === '{') {
      stack.push(state);
      state = { ...state };
      fallbackToSkip = 0;
      i++;
    } else if (ch === '}') {
      flushBytes();
      state = stack.pop() ?? state;
      fallbackToSkip = 0;
      i++;
    } else if (ch === '\r' || ch === '\n') {
      i++;
    } else if (ch !== '\\') {
      emit(ch);
      i++;
    } else {
      const next = rtf[i + 1] ?? '';
      if (/[a-zA-Z]/.test(next)) {
        const m = /^([a-zA-Z]+)(-?\d+)? ?/.exec(rtf.slice(i + 1, i + 64))!;
        i += 1 + m[0].length;
        const word = m[1]!;
        const param = m[2] === undefined ? undefined : Number(m[2]);
        if (SKIPPED_DESTINATIONS.has(word)) {
          state.skip = true;
        } else if (word === 'u' && param !== undefined) {
          emit(String.fromCharCode(param < 0 ? param + 65536 : param));
          fallbackToSkip = state.unicodeSkip;
        } else if (word === 'uc' && param !== undefined) {
          state.unicodeSkip = param;
        } else if (word === 'ansicpg' && param !== undefined) {
          decoder = decoderFor(param);
        } else if (word === 'bin' && param !== undefined) {
          i += param;
        } else if (word in SYMBOL_WORDS) {
          emit(SYMBOL_WORDS[word]!);
        }
      } else if (next === "'") {
        const byte = Number.parseInt(rtf.slice(i + 2, i + 4), 16);
        i += 4;
        if (Number.isNaN(byte) || state.skip) continue;
        if (fallbackToSkip > 0) fallbackToSkip--;
        else pendingBytes.push(byte);
      } else if (next === '*') {
        state.skip = true;
        i += 2;
      } else if (next === '\r' || next === '\n') {
        emit('\n');
        i += 2;
      } else {
        const symbol: Readonly<Record<string, string>> = { '\\': '\\', '{': '{', '}': '}', '~': '\u00a0', '_': '\u2011', '-': '' };
        emit(symbol[next] ?? '');
        i += 2;
      }
    }
  }
  flushBytes();
  return out;
}

export function extractRtf(bytes: Uint8Array): ExtractedDocument {
  const { text, encoding } = decodeRtfBytes(bytes);
  return { format: 'rtf', text: stripRtf(text).trim(), metadata: { encoding } };
}
