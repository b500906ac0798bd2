import path from 'node:path';
import { SqliteAuditLog } from '../../stores/embedded/sqlite-audit-log.js';
import type { AuditLog } from '../../stores/ports/audit-log.js';
import { makeTempDir, removeDir } from '../helpers/tmp.js';
import { describeAuditLogContract } from './audit-log.contract.js';

describeAuditLogContract('embedded (SQLite)', async () => {
  const dir = makeTempDir('mp-audit-contract-');
  const file = path.join(dir, 'audit.sqlite3');
  const opened: AuditLog[] = [new SqliteAuditLog(file)];
  return {
    log: opened[0]!,
    another: async () => {
      const log = new SqliteAuditLog(file);
      opened.push(log);
      return log;
    },
    async cleanup() {
      await Promise.all(opened.map((l) => l.close()));
      removeDir(dir);
    },
  };
});
