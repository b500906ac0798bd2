/**
 * Text extraction for extract mode (docs/palace-behaviour.md §6): pick the converter by extension, run it on the
 * file's bytes, and turn every failure into a structured PalaceError whose `rule` and
 * `details.status` name the spec's outcome (empty, too large, unrecognised, encrypted, corrupt).
 */
import { isPalaceError, type PalaceError } from '../errors.js';
import { extractDocx } from './docx.js';
import { extractEpub } from './epub.js';
import { isEncryptedOfficeFile } from './ooxml.js';
import { extractPdf } from './pdf.js';
import { extractPptx } from './pptx.js';
import { extractRtf } from './rtf.js';
import { DOCUMENT_EXTENSIONS, extractionError, MAX_DOCUMENT_BYTES, type DocumentFormat, type ExtractedDocument, type ExtractFailureRule, type ExtractOutcome,
  type ExtractStatus } from './types.js';
import { extractXlsx } from './xlsx.js';

const CONVERTERS: Record<DocumentFormat, (bytes: Uint8Array) => ExtractedDocument | Promise<ExtractedDocument>> = {
  pdf: extractPdf,
  docx: extractDocx,
  pptx: extractPptx,
  xlsx: extractXlsx,
  epub: extractEpub,
  rtf: extractRtf,
};

const OFFICE_FORMATS = new Set<DocumentFormat>(['docx', 'pptx', 'xlsx']);
const ENCRYPTION_WORDS = /encrypt|decrypt|password|protected/i;
const IGNORED_NAMES = new Set(['.ds_store', 'thumbs.db', 'desktop.ini']);

function baseName(fileName: string): string {
  return fileName.slice(Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\')) + 1);
}

/** The format extract mode uses for a file name, or undefined when it does not mine it. */
export function documentFormatOf(fileName: string): DocumentFormat | undefined {
  const base = baseName(fileName);
  if (IGNORED_NAMES.has(base.toLowerCase())) return undefined;
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? undefined : DOCUMENT_EXTENSIONS[base.slice(dot).toLowerCase()];
}

/** Extract the text of one document; throws a PalaceError naming the outcome on failure. */
export async function extractDocument(bytes: Uint8Array, fileName: string): Promise<ExtractedDocument> {
  if (bytes.byteLength === 0) throw extractionError('empty', fileName, `${baseName(fileName)} is empty`);
  if (bytes.byteLength > MAX_DOCUMENT_BYTES) {
    throw extractionError('too_large', fileName, `${baseName(fileName)} is ${bytes.byteLength} bytes, over the ${MAX_DOCUMENT_BYTES}-byte limit`);
  }
  const format = documentFormatOf(fileName);
  if (format === undefined) throw extractionError('unsupported_format', fileName, `${baseName(fileName)} is not a supported document type`);
  if (OFFICE_FORMATS.has(format) && isEncryptedOfficeFile(bytes)) {
    throw extractionError('encrypted', fileName, `${baseName(fileName)} is password-protected (encrypted Office file)`);
  }

  let document: ExtractedDocument;
  try {
    document = await CONVERTERS[format](bytes);
  } catch (e) {
    if (isPalaceError(e)) throw e;
    const reason = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    const rule: ExtractFailureRule = ENCRYPTION_WORDS.test(reason) ? 'encrypted' : 'corrupt';
    throw extractionError(rule, fileName, `could not extract ${baseName(fileName)} (${rule}): ${reason}`, e);
  }
  if (document.text.trim() === '') throw extractionError('empty', fileName, `${baseName(fileName)} has no extractable text`);
  return document;
}

/** Same as `extractDocument`, but returns the outcome instead of throwing for expected failures. */
export async function tryExtractDocument(bytes: Uint8Array, fileName: string): Promise<ExtractOutcome> {
  try {
    return { status: 'OK', document: await extractDocument(bytes, fileName) };
  } catch (e) {
    if (!isPalaceError(e) || e.details?.status === undefined) throw e;
    const error: PalaceError = e;
    return {
      status: error.details!.status as Exclude<ExtractStatus, 'OK'>,
      rule: error.rule as ExtractFailureRule,
      message: error.message,
    };
  }
}
