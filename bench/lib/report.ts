/**
 * Writing a benchmark's table into bench/README.md: the section under `heading` is replaced (or
 * appended when missing), so re-running a benchmark with `--write` keeps one current copy.
 */
import fs from 'node:fs';
import path from 'node:path';

const README = path.resolve(import.meta.dirname, '../README.md');

export function writeReadmeSection(heading: string, command: string, table: string): void {
  const section = `${heading}\n\n\`${command}\`\n\n${table}\n`;
  let text = fs.existsSync(README) ? fs.readFileSync(README, 'utf8') : '# Benchmarks\n';
  const start = text.indexOf(heading);
  if (start === -1) {
    text = `${text.trimEnd()}\n\n${section}`;
  } else {
    const next = text.indexOf('\n## ', start + heading.length);
    text = text.slice(0, start) + section + (next === -1 ? '' : text.slice(next));
  }
  fs.writeFileSync(README, text);
}

/** Prints a benchmark's table, and with `--write` on the command line also files it under `heading`. */
export function publishTable(heading: string, command: string, table: string): void {
  process.stdout.write(`${table}\n`);
  if (process.argv.includes('--write')) writeReadmeSection(heading, command, table);
}
