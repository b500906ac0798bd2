/** Word documents: mammoth turns the document into HTML, which is rendered as Markdown. */
import mammoth from 'mammoth';
import { NodeHtmlMarkdown } from 'node-html-markdown';
import type { ExtractedDocument } from './types.js';

export async function extractDocx(bytes: Uint8Array): Promise<ExtractedDocument> {
  const result = await mammoth.convertToHtml({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });
  const warnings = result.messages.map((m) => m.message);
  return {
    format: 'docx',
    text: NodeHtmlMarkdown.translate(result.value),
    metadata: warnings.length > 0 ? { warnings } : {},
  };
}
