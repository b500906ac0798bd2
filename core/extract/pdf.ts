/** PDF text through pdf.js: the text items of each page, pages separated by a blank line. */
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { DocumentMetadata, ExtractedDocument } from './types.js';

interface TextItemLike {
  str?: unknown;
  hasEOL?: unknown;
}

function pageText(items: readonly TextItemLike[]): string {
  let text = '';
  for (const item of items) {
    if (typeof item.str === 'string') text += item.str;
    if (item.hasEOL === true) text += '\n';
  }
  return text.trim();
}

export async function extractPdf(bytes: Uint8Array): Promise<ExtractedDocument> {
  // pdf.js takes ownership of (detaches) the buffer it is given, so it gets a copy.
  const loading = getDocument({
    data: new Uint8Array(bytes),
    verbosity: VerbosityLevel.ERRORS,
    isEvalSupported: false,
    useSystemFonts: false,
    disableFontFace: true,
    stopAtErrors: false,
  });
  const doc = await loading.promise;
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      pages.push(pageText(content.items as TextItemLike[]));
      page.cleanup();
    }
    const metadata: DocumentMetadata = { pages: doc.numPages };
    const info = (await doc.getMetadata()).info as Record<string, unknown> | undefined;
    if (typeof info?.Title === 'string' && info.Title.trim() !== '') metadata.title = info.Title;
    if (typeof info?.Author === 'string' && info.Author.trim() !== '') metadata.author = info.Author;
    return { format: 'pdf', text: pages.filter((p) => p !== '').join('\n\n'), metadata };
  } finally {
    await doc.destroy();
  }
}
