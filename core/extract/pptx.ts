/**
 * PowerPoint decks: slides in presentation order, each introduced by `<!-- Slide number: N -->`;
 * title placeholders become `# ` headings, tables become Markdown tables, speaker notes follow
 * under `### Notes:`. No maintained npm library extracts PPTX text on Node 20, so the slide XML is
 * read directly (zip via fflate, XML via fast-xml-parser).
 */
import { allText, attr, children, childrenOf, entryText, findAll, findFirst, markdownTable, parseXml, relationships, tagOf, unzip, type XmlNode,
  type ZipEntries } from './ooxml.js';
import type { ExtractedDocument } from './types.js';

const PRESENTATION = 'ppt/presentation.xml';
const TITLE_PLACEHOLDERS = new Set(['title', 'ctrTitle']);
const NOTES_REL = '/notesSlide';

/** Text of one `a:p`: runs and fields in order, `a:br` as a line break. */
function paragraphText(p: XmlNode): string {
  let text = '';
  for (const child of childrenOf(p)) {
    const tag = tagOf(child);
    if (tag === 'a:r' || tag === 'a:fld') text += allText(children(childrenOf(child), 'a:t'));
    else if (tag === 'a:br') text += '\n';
  }
  return text;
}

function textBodyText(txBody: XmlNode | undefined): string {
  if (txBody === undefined) return '';
  return children(childrenOf(txBody), 'a:p').map(paragraphText).join('\n').trim();
}

function placeholderType(shape: XmlNode): string | undefined {
  const ph = findFirst(childrenOf(shape), 'p:ph');
  return ph === undefined ? undefined : (attr(ph, 'type') ?? 'body');
}

function tableText(frame: XmlNode): string {
  const table = findFirst(childrenOf(frame), 'a:tbl');
  if (table === undefined) return '';
  const rows = children(childrenOf(table), 'a:tr').map((tr) =>
    children(childrenOf(tr), 'a:tc').map((tc) => textBodyText(findFirst(childrenOf(tc), 'a:txBody')))
  );
  return markdownTable(rows);
}

/** Blocks of a shape tree in document order (groups flattened). */
function shapeTreeBlocks(nodes: readonly XmlNode[]): string[] {
  const blocks: string[] = [];
  for (const node of nodes) {
    const tag = tagOf(node);
    if (tag === 'p:sp') {
      const text = textBodyText(children(childrenOf(node), 'p:txBody')[0]);
      if (text === '') continue;
      const ph = placeholderType(node);
      blocks.push(ph !== undefined && TITLE_PLACEHOLDERS.has(ph) ? `# ${text}` : text);
    } else if (tag === 'p:graphicFrame') {
      const table = tableText(node);
      if (table !== '') blocks.push(table);
    } else if (tag === 'p:grpSp') {
      blocks.push(...shapeTreeBlocks(childrenOf(node)));
    }
  }
  return blocks;
}

function spTree(xml: string): XmlNode[] {
  const tree = findFirst(parseXml(xml), 'p:spTree');
  return tree === undefined ? [] : childrenOf(tree);
}

function notesText(entries: ZipEntries, slidePart: string): string {
  for (const rel of relationships(entries, slidePart).values()) {
    if (!rel.type.endsWith(NOTES_REL)) continue;
    const xml = entryText(entries, rel.target);
    if (xml === undefined) return '';
    const bodies = spTree(xml).filter((n) => tagOf(n) === 'p:sp' && placeholderType(n) === 'body');
    return bodies.map((b) => textBodyText(children(childrenOf(b), 'p:txBody')[0])).filter((t) => t !== '').join('\n');
  }
  return '';
}

/** Slide parts in presentation order, falling back to slide-number order. */
function slideParts(entries: ZipEntries): string[] {
  const xml = entryText(entries, PRESENTATION);
  if (xml === undefined) throw new Error('not a PowerPoint file: ppt/presentation.xml is missing');
  const rels = relationships(entries, PRESENTATION);
  const ordered = findAll(parseXml(xml), 'p:sldId')
    .map((s) => rels.get(attr(s, 'r:id') ?? '')?.target)
    .filter((t): t is string => t !== undefined && entries[t] !== undefined);
  if (ordered.length > 0) return ordered;
  const number = (name: string): number => Number(/(\d+)\.xml$/.exec(name)?.[1] ?? 0);
  return Object.keys(entries)
    .filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n))
    .sort((a, b) => number(a) - number(b));
}

export function extractPptx(bytes: Uint8Array): ExtractedDocument {
  const entries = unzip(bytes);
  const parts = slideParts(entries);
  const slides = parts.map((part, i) => {
    const blocks = [`<!-- Slide number: ${i + 1} -->`, ...shapeTreeBlocks(spTree(entryText(entries, part) ?? ''))];
    const notes = notesText(entries, part);
    if (notes !== '') blocks.push(`### Notes:\n${notes}`);
    return blocks.join('\n');
  });
  return { format: 'pptx', text: slides.join('\n\n'), metadata: { slides: parts.length } };
}
