/** Shapes and outcomes of document text extraction (docs/palace-behaviour.md §6). */
import { PalaceError } from '../errors.js';

export type DocumentFormat = 'pdf' | 'docx' | 'pptx' | 'xlsx' | 'epub' | 'rtf';

/** Extensions extract mode mines (docs/palace-behaviour.md §6), lowercase with the dot. */
export const DOCUMENT_EXTENSIONS: Readonly<Record<string, DocumentFormat>> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.pptx': 'pptx',
  '.xlsx': 'xlsx',
  '.epub': 'epub',
  '.rtf': 'rtf',
};

/** Documents above this size are skipped (docs/palace-behaviour.md §6). */
export const MAX_DOCUMENT_BYTES = 500 * 1024 * 1024;

export interface DocumentMetadata {
  title?: string;
  author?: string;
  /** PDF pages. */
  pages?: number;
  /** PPTX slides. */
  slides?: number;
  /** XLSX sheet names in workbook order. */
  sheets?: string[];
  /** How an RTF file's bytes were decoded (docs/palace-behaviour.md §6). */
  encoding?: 'utf-8' | 'windows-1252' | 'utf-8-replaced';
  /** Non-fatal converter messages (e.g. unrecognised Word styles). */
  warnings?: string[];
}

export interface ExtractedDocument {
  format: DocumentFormat;
  /** Markdown-flavoured plain text, never written to disk. */
  text: string;
  metadata: DocumentMetadata;
}

/**
 * Per-file outcome names of extract mode (docs/palace-behaviour.md §6). The converter reports the content-related
 * ones; the scanner reports the file-system ones (symlinks, cloud placeholders, permissions).
 */
export type ExtractStatus =
  | 'OK'
  | 'SKIP_BROKEN_SYMLINK'
  | 'SKIP_CLOUD_ONLY'
  | 'SKIP_PERMISSION'
  | 'SKIP_UNREADABLE'
  | 'SKIP_EMPTY'
  | 'SKIP_TOO_LARGE'
  | 'SKIP_UNRECOGNIZED'
  | 'SKIP_ENCRYPTED'
  | 'SKIP_EXTRACTION_ERROR';

/** The rule a failed extraction broke, as carried in the PalaceError. */
export type ExtractFailureRule = 'empty' | 'too_large' | 'unsupported_format' | 'encrypted' | 'corrupt';

const STATUS_BY_RULE: Record<ExtractFailureRule, ExtractStatus> = {
  empty: 'SKIP_EMPTY',
  too_large: 'SKIP_TOO_LARGE',
  unsupported_format: 'SKIP_UNRECOGNIZED',
  encrypted: 'SKIP_ENCRYPTED',
  corrupt: 'SKIP_EXTRACTION_ERROR',
};

export function extractionError(rule: ExtractFailureRule, fileName: string, message: string, cause?: unknown): PalaceError {
  return new PalaceError(rule === 'too_large' ? 'too_large' : 'invalid_argument', message, {
    field: 'source_file',
    rule,
    details: { status: STATUS_BY_RULE[rule], file: fileName },
    cause,
  });
}

export type ExtractOutcome =
  | { status: 'OK'; document: ExtractedDocument }
  | { status: Exclude<ExtractStatus, 'OK'>; rule: ExtractFailureRule; message: string };
