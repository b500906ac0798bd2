/**
 * EPUB books: the package document (OPF) named by META-INF/container.xml gives the reading order
 * (spine); each XHTML chapter is rendered as Markdown and chapters are joined with a blank line.
 */
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { allText, attr, entryText, findAll, findFirst, parseXml, resolvePart, unzip } from './ooxml.js';
import type { DocumentMetadata, ExtractedDocument } from './types.js';

const CONTAINER = 'META-INF/container.xml';

export function extractEpub(bytes: Uint8Array): ExtractedDocument {
  const entries = unzip(bytes);
  const container = entryText(entries, CONTAINER);
  if (container === undefined) throw new Error(`not an EPUB file: ${CONTAINER} is missing`);
  const rootfile = findFirst(parseXml(container), 'rootfile');
  const opfPath = rootfile === undefined ? undefined : attr(rootfile, 'full-path');
  const opfXml = opfPath === undefined ? undefined : entryText(entries, opfPath);
  if (opfPath === undefined || opfXml === undefined) throw new Error('not an EPUB file: the package document is missing');

  const opf = parseXml(opfXml);
  const hrefs = new Map<string, string>();
  for (const item of findAll(opf, 'item')) {
    const id = attr(item, 'id');
    const href = attr(item, 'href');
    if (id !== undefined && href !== undefined) hrefs.set(id, resolvePart(opfPath, decodeURIComponent(href)));
  }
  const chapters: string[] = [];
  for (const itemref of findAll(opf, 'itemref')) {
    const part = hrefs.get(attr(itemref, 'idref') ?? '');
    const html = part === undefined ? undefined : entryText(entries, part);
    if (html === undefined) continue;
    // The <head> (title, styles) is not part of the reading text.
    const body = /<body[^>]*>([\s\S]*)<\/body>/i.exec(html)?.[1] ?? html;
    const markdown = NodeHtmlMarkdown.translate(body).trim();
    if (markdown !== '') chapters.push(markdown);
  }
  const metadata: DocumentMetadata = {};
  const title = allText(findAll(opf, 'dc:title')).trim();
  const author = allText(findAll(opf, 'dc:creator')).trim();
  if (title !== '') metadata.title = title;
  if (author !== '') metadata.author = author;
  return { format: 'epub', text: chapters.join('\n\n'), metadata };
}
