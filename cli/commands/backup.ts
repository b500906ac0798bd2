/**
 * `mempalace export`, `import`, `migrate` and `repair`: backups as gzip JSON lines, moving a
 * palace between the embedded and cluster profiles, and rebuilding the derived drawer indexes.
 */
import path from 'node:path';
import cliProgress from 'cli-progress';
import type { Command } from 'commander';
import { Option } from 'commander';
import type { Config } from '../../core/config.js';
import type { RecordKind } from '../../palace/backup/backup-records.js';
import type { RecordProgress } from '../../palace/backup/export.js';
import { exportPalace } from '../../palace/backup/export.js';
import { importPalace } from '../../palace/backup/import.js';
import { migratePalace } from '../../palace/backup/migrate.js';
import { repairIndexes } from '../../palace/backup/repair.js';
import type { RepairReport } from '../../palace/backup/repair.js';
import { openIndexMaintenance, openStores } from '../../stores/open.js';
import { printJson, table } from '../output.js';
import { openRuntime } from '../../app/runtime.js';
import type { Runtime } from '../../palace/runtime.js';

interface GlobalOpts {
  json?: boolean;
}

/** A live bar on a terminal, a line per record kind otherwise, nothing with --json. */
function progressReporter(json: boolean, label: string, total: number): { onProgress: RecordProgress; stop(): void } {
  if (json) return { onProgress: () => undefined, stop: () => undefined };
  let done = 0;
  let kind: RecordKind | undefined;
  if (!process.stderr.isTTY) {
    return {
      onProgress: (k) => {
        done++;
        if (k !== kind) process.stderr.write(`${label}: ${k} records…\n`);
        kind = k;
      },
      stop: () => process.stderr.write(`${label}: ${done} records\n`),
    };
  }
  const bar = new cliProgress.SingleBar({ format: `${label} [{bar}] {value}/{total} records · {kind}`, hideCursor: true }, cliProgress.Presets.shades_classic);
  bar.start(Math.max(1, total), 0, { kind: 'drawer' });
  return {
    onProgress: (k) => {
      done++;
      if (done > total) bar.setTotal(done);
      bar.update(done, { kind: k });
    },
    stop: () => bar.stop(),
  };
}

/** Records the palace will stream, as far as cheap counts tell (events are not counted ahead). */
async function expectedRecords(rt: Pick<Runtime, 'stores'>): Promise<number> {
  const kg = await rt.stores.graph.kgStats();
  return (await rt.stores.drawers.count()) + kg.triples + (await rt.stores.graph.tunnelCount());
}

function countsTable(counts: Record<string, number>): string {
  return table(['records', 'count'], Object.entries(counts));
}

function printRepair(report: RepairReport): void {
  const findings = (label: string, check: RepairReport['before']) => {
    if (check.findings.length === 0) return `${label}: no differences (${check.store})`;
    return `${label}:\n${
      table(['part', 'problem', 'count', 'sample'], check.findings.map((f) => [f.part, f.problem, f.count ?? '', (f.sample ?? []).join(', ')]))
    }`;
  };
  console.log(findings('check', report.before));
  if (report.rebuilt) console.log(`rebuilt: ${JSON.stringify(report.rebuilt)}`);
  if (report.after) console.log(findings('after the rebuild', report.after));
}

export function registerBackupCommands(program: Command, configFrom: () => Config): void {
  const json = () => Boolean(program.opts<GlobalOpts>().json);

  /** Export or import: the records streamed with progress, then the summary and its counts. */
  async function streamRecords<Summary extends { counts: Record<string, number> }>(label: string, expected: (rt: Runtime) => Promise<number>,
    run: (rt: Runtime, onProgress: RecordProgress) => Promise<Summary>, headline: (rt: Runtime, summary: Summary) => string): Promise<void> {
    const rt = await openRuntime(configFrom());
    try {
      const progress = progressReporter(json(), label, await expected(rt));
      const summary = await run(rt, progress.onProgress).finally(() => progress.stop());
      if (json()) return printJson(summary);
      console.log(headline(rt, summary));
      console.log(countsTable(summary.counts));
    } finally {
      await rt.close();
    }
  }

  program
    .command('export')
    .description('write the whole palace (drawers with vectors, KG, tunnels, hallways, diaries, logstream) to a gzip JSON-lines file')
    .argument('<file>', 'file to write (e.g. palace.jsonl.gz); it appears only once complete')
    .action((file: string) =>
      streamRecords('export', expectedRecords, (rt, onProgress) => exportPalace(rt.stores, rt.embedder.identity, path.resolve(file), onProgress),
        (rt, summary) => `Exported ${rt.stores.palace} (${rt.config.profile}) to ${summary.file}, ${summary.bytes} bytes, model ${summary.model.name}`)
    );

  program
    .command('import')
    .description('restore an export into the palace: idempotent, resumable after an interruption, refused when its model differs')
    .argument('<file>', 'an export written by `mempalace export`')
    .action((file: string) =>
      streamRecords('import', async () => 0, (rt, onProgress) => importPalace(rt.stores, rt.embedder.identity, path.resolve(file), onProgress), (rt, summary) =>
        `Imported ${summary.export_id} into ${rt.stores.palace} (${rt.config.profile})${
          summary.resumed_from > 0 ? `, resumed after record ${summary.resumed_from}` : ''
        }`)
    );

  program
    .command('migrate')
    .description("copy the palace into the other profile's stores (vectors copied, nothing re-embedded), then verify the copy")
    .addOption(new Option('--to <profile>', 'the profile to copy into').choices(['cluster', 'embedded']).makeOptionMandatory())
    .action(async (o: { to: 'cluster' | 'embedded' }) => {
      const base = configFrom();
      const from = o.to === 'cluster' ? 'embedded' : 'cluster';
      const source = await openRuntime({ ...base, profile: from });
      try {
        const target = await openStores({ ...base, profile: o.to });
        try {
          const progress = progressReporter(json(), `migrate ${from} → ${o.to}`, await expectedRecords(source));
          const summary = await migratePalace(source.stores, target, source.embedder.identity, progress.onProgress).finally(() => progress.stop());
          if (json()) printJson(summary);
          else {
            console.log(`Copied ${source.stores.palace} (${from}) into ${target.palace} (${o.to})`);
            console.log(countsTable(summary.copy.counts));
            const v = summary.verification;
            console.log(
              `Verification: ${
                v.ok ? 'identical' : 'DIFFERENT'
              } — ${v.counts.length} counts compared, ${v.mismatches.length} differ; ${v.searches.identical}/${v.searches.sampled} sampled searches identical`,
            );
            if (v.mismatches.length > 0) console.log(table(['what', from, o.to], v.mismatches.map((m) => [m.what, m.source, m.target])));
          }
          if (!summary.verification.ok) process.exitCode = 1;
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });

  program
    .command('repair')
    .description('check the derived drawer indexes (embedded: FTS and ANN; cluster: the OpenSearch index) and rebuild them from the drawers')
    .option('--check', 'report differences without changing anything (exit code 1 when there are any)')
    .action(async (o: { check?: boolean }) => {
      const maintenance = openIndexMaintenance(configFrom());
      try {
        const report = await repairIndexes(maintenance, { checkOnly: Boolean(o.check) });
        if (json()) printJson(report);
        else printRepair(report);
        const remaining = report.after ?? report.before;
        if (remaining.findings.length > 0) process.exitCode = 1;
      } finally {
        await maintenance.close();
      }
    });
}
