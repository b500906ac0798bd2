/**
 * A throwaway OpenSearch palace for tests that work on its indices directly: a fresh palace
 * name, a connection to the configured node, and every index of the palace dropped afterwards,
 * whatever the test did.
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../app/config.js';
import { OpenSearchConnection } from '../../stores/opensearch/connection.js';
import { dropPalaceIndices } from '../../stores/opensearch/drawer-mapping.js';

export interface ThrowawayOpenSearchPalace {
  url: string;
  palaceName: string;
  /** A connection with the default layout (one shard, no replica). */
  conn: OpenSearchConnection;
}

export async function inThrowawayOpenSearchPalace<T>(prefix: string, run: (palace: ThrowawayOpenSearchPalace) => Promise<T>): Promise<T> {
  const url = loadConfig().opensearch.url;
  const palaceName = `${prefix}-${randomBytes(5).toString('hex')}`;
  const conn = new OpenSearchConnection({ url, palaceName });
  try {
    return await run({ url, palaceName, conn });
  } finally {
    await dropPalaceIndices(conn);
    await conn.close();
  }
}
