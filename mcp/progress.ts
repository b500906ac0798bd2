/**
 * MCP progress notifications for a long-running tool whose request carried a progress token:
 * `progress` counts files seen, `total` is the file count once the scan has found it, and a short
 * message says where the job is. MCP requires `progress` to grow with every notification, so a
 * job update that does not advance it is not sent (the first one, while scanning, always is).
 */
import type { ProgressToken, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import type { JobProgress } from '../jobs/job.js';

export function progressMessage(p: JobProgress): string {
  if (p.files_total === 0 && p.state === 'running') return `${p.kind}: scanning`;
  return `${p.kind} ${p.state}: ${p.files_seen}/${p.files_total} files, ${p.drawers_written} drawers`;
}

export function progressRelay(token: ProgressToken, send: (n: ServerNotification) => Promise<void>): (p: JobProgress) => void {
  let last = -1;
  return (p) => {
    const progress = p.files_seen;
    if (progress <= last) return;
    last = progress;
    const notification: ServerNotification = {
      method: 'notifications/progress',
      params: { progressToken: token, progress, ...(p.files_total > 0 ? { total: p.files_total } : {}), message: progressMessage(p) },
    };
    void send(notification).catch(() => undefined);
  };
}
