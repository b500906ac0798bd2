/** Excel workbooks: every sheet as a `## <name>` heading and a Markdown table (first row as header). */
import readExcelFile from 'read-excel-file/node';
import { markdownTable } from './ooxml.js';
import type { ExtractedDocument } from './types.js';

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : value.toISOString().replace(/T00:00:00\.000Z$/, '');
  return String(value);
}

export async function extractXlsx(bytes: Uint8Array): Promise<ExtractedDocument> {
  const sheets = await readExcelFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  const sections = sheets.map(({ sheet, data }) => {
    const rows = data.map((row) => row.map(cellText)).filter((row) => row.some((c) => c !== ''));
    return rows.length === 0 ? `## ${sheet}` : `## ${sheet}\n${markdownTable(rows)}`;
  });
  return { format: 'xlsx', text: sections.join('\n\n'), metadata: { sheets: sheets.map((s) => s.sheet) } };
}
