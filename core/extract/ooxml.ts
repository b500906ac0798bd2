/**
 * Reading the zip containers of OOXML and EPUB files and their XML parts, in document order.
 */
import { unzipSync } from 'fflate';
import { XMLParser } from 'fast-xml-parser';

export type ZipEntries = Record<string, Uint8Array>;

export function unzip(bytes: Uint8Array): ZipEntries {
  return unzipSync(bytes);
}

const utf8 = new TextDecoder('utf-8');

export function entryText(entries: ZipEntries, name: string): string | undefined {
  const bytes = entries[name];
  return bytes === undefined ? undefined : utf8.decode(bytes);
}

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const ENCRYPTION_INFO = Buffer.from('EncryptionInfo', 'utf16le');

/**
 * A password-protected Office file is not a zip but an OLE compound file holding an
 * `EncryptionInfo` stream; recognising it gives "encrypted" instead of "corrupt".
 */
export function isEncryptedOfficeFile(bytes: Uint8Array): boolean {
  if (bytes.length < CFB_MAGIC.length || CFB_MAGIC.some((b, i) => bytes[i] !== b)) return false;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes(ENCRYPTION_INFO);
}

/** An XML element in document order: `{ [tag]: children, ':@'?: attributes }`; text is `{ '#text': s }`. */
export type XmlNode = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  trimValues: false,
  parseTagValue: false,
  parseAttributeValue: false,
});

export function parseXml(xml: string): XmlNode[] {
  return parser.parse(xml) as XmlNode[];
}

export function tagOf(node: XmlNode): string | undefined {
  return Object.keys(node).find((k) => k !== ':@');
}

export function childrenOf(node: XmlNode): XmlNode[] {
  const tag = tagOf(node);
  const value = tag === undefined ? undefined : node[tag];
  return Array.isArray(value) ? (value as XmlNode[]) : [];
}

export function attr(node: XmlNode, name: string): string | undefined {
  const attrs = node[':@'] as Record<string, unknown> | undefined;
  const value = attrs?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function textOf(node: XmlNode): string | undefined {
  const value = node['#text'];
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}

/** Direct children with a tag. */
export function children(nodes: readonly XmlNode[], tag: string): XmlNode[] {
  return nodes.filter((n) => tagOf(n) === tag);
}

/** First element with a tag, searching depth-first in document order. */
export function findFirst(nodes: readonly XmlNode[], tag: string): XmlNode | undefined {
  for (const node of nodes) {
    if (tagOf(node) === tag) return node;
    const found = findFirst(childrenOf(node), tag);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** All elements with a tag, depth-first in document order (not descending into matches). */
export function findAll(nodes: readonly XmlNode[], tag: string): XmlNode[] {
  const out: XmlNode[] = [];
  for (const node of nodes) {
    if (tagOf(node) === tag) out.push(node);
    else out.push(...findAll(childrenOf(node), tag));
  }
  return out;
}

/** Concatenated text of every descendant text node. */
export function allText(nodes: readonly XmlNode[]): string {
  let out = '';
  for (const node of nodes) out += textOf(node) ?? allText(childrenOf(node));
  return out;
}

/** Resolve a relationship target against the folder of the part that declares it. */
export function resolvePart(fromPart: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = fromPart.split('/').slice(0, -1);
  for (const segment of target.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.') parts.push(segment);
  }
  return parts.join('/');
}

/** Relationship id → resolved part path, from `<dir>/_rels/<name>.rels`. */
export function relationships(entries: ZipEntries, part: string): Map<string, { target: string; type: string }> {
  const slash = part.lastIndexOf('/');
  const relsName = `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`;
  const xml = entryText(entries, relsName);
  const map = new Map<string, { target: string; type: string }>();
  if (xml === undefined) return map;
  for (const rel of findAll(parseXml(xml), 'Relationship')) {
    const id = attr(rel, 'Id');
    const target = attr(rel, 'Target');
    if (id !== undefined && target !== undefined && attr(rel, 'TargetMode') !== 'External') {
      map.set(id, { target: resolvePart(part, target), type: attr(rel, 'Type') ?? '' });
    }
  }
  return map;
}

/** One Markdown table row; pipes escaped and line breaks flattened so the row stays one line. */
export function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map((c) => c.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ')).join(' | ')} |`;
}

export function markdownTable(rows: readonly (readonly string[])[]): string {
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const pad = (r: readonly string[]): string[] => [...r, ...Array<string>(width - r.length).fill('')];
  const [header, ...body] = rows;
  return [markdownRow(pad(header!)), markdownRow(Array<string>(width).fill('---')), ...body.map((r) => markdownRow(pad(r)))].join('\n');
}
