/**
 * Smoke tests of the real engine stack (deploy/local/up.sh) through the official clients. Every
 * endpoint comes from the same variables the product reads (deploy/local/env.sh prints them).
 * An engine that is down makes its test fail: connections are opened eagerly and nothing retries
 * for long.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, it, expect } from 'vitest';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { Client as OpenSearchClient } from '@opensearch-project/opensearch';
import neo4j from 'neo4j-driver';
import { Redis } from 'ioredis';
import { Queue, QueueEvents, Worker as BullWorker } from 'bullmq';
import { smokeGreeting } from './fixtures/smoke-workflow.js';

const TEMPORAL_ADDRESS = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const TEMPORAL_NAMESPACE = process.env.TEMPORAL_NAMESPACE ?? 'mempalace';
const OPENSEARCH_URL = process.env.OPENSEARCH_URL ?? 'http://127.0.0.1:9200';
const NEO4J_URI = process.env.NEO4J_URI ?? 'bolt://127.0.0.1:7687';
const NEO4J_USER = process.env.NEO4J_USER ?? 'neo4j';
const NEO4J_PASSWORD = process.env.NEO4J_PASSWORD ?? 'unused-auth-disabled';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Unique per run, so parallel or interrupted runs never collide on names. */
const RUN_ID = `smoke-${Date.now().toString(36)}-${randomUUID().slice(0, 8)}`;

const ENGINE_TIMEOUT_MS = 120_000;

describe('Temporal dev server', () => {
  it('runs a workflow with an activity on a Worker and returns its result to the Client', async () => {
    const taskQueue = `${RUN_ID}-tq`;
    const workerConnection = await NativeConnection.connect({ address: TEMPORAL_ADDRESS });
    const clientConnection = await Connection.connect({ address: TEMPORAL_ADDRESS, connectTimeout: 10_000 });
    try {
      const worker = await Worker.create({
        connection: workerConnection,
        namespace: TEMPORAL_NAMESPACE,
        taskQueue,
        workflowsPath: fileURLToPath(new URL('./fixtures/smoke-workflow.ts', import.meta.url)),
        activities: { shout: async (text: string) => text.toUpperCase() },
      });
      const client = new TemporalClient({ connection: clientConnection, namespace: TEMPORAL_NAMESPACE });
      const name = `palace ${RUN_ID}`;
      const result = await worker.runUntil(
        client.workflow.execute(smokeGreeting, { taskQueue, workflowId: `${RUN_ID}-wf`, args: [name] }),
      );
      expect(result).toBe(`hello ${name.toUpperCase()} from smokeGreeting`);

      const description = await client.workflow.getHandle(`${RUN_ID}-wf`).describe();
      expect(description.status.name).toBe('COMPLETED');
    } finally {
      await clientConnection.close();
      await workerConnection.close();
    }
  }, ENGINE_TIMEOUT_MS);
});

describe('OpenSearch with the k-NN plugin', () => {
  const DIMENSION = 384;

  /** A vector with the given weights on its first axes and zeros elsewhere (not normalised). */
  function vector(weights: number[]): number[] {
    const v = new Array<number>(DIMENSION).fill(0);
    weights.forEach((w, i) => (v[i] = w));
    return v;
  }

  function cosine(a: number[], b: number[]): number {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
      const x = a[i] ?? 0;
      const y = b[i] ?? 0;
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    return dot / Math.sqrt(na * nb);
  }

  interface SmokeDoc {
    id: string;
    kind: 'note' | 'task';
    content: string;
    embedding: number[];
  }

  const docs: SmokeDoc[] = [
    { id: 'task-closest', kind: 'task', content: 'a task about the harbour', embedding: vector([1, 0.02]) },
    { id: 'note-near', kind: 'note', content: 'a note about the lighthouse', embedding: vector([1, 0.3, 0.1]) },
    { id: 'note-mid', kind: 'note', content: 'a note about the zebra crossing', embedding: vector([0.6, 0.2, 0.8]) },
    { id: 'note-far', kind: 'note', content: 'a note about the orchard', embedding: vector([0, 1, 0]) },
  ];
  const query = vector([1, 0.05]);

  it('reports 3.5.x, answers a filtered k-NN query and a BM25 match query', async () => {
    const client = new OpenSearchClient({ node: OPENSEARCH_URL, requestTimeout: 30_000, maxRetries: 0 });
    const index = RUN_ID;
    try {
      const info = await client.info();
      expect(info.body.version.number).toMatch(/^3\.5\./);

      await client.indices.create({
        index,
        body: {
          settings: { index: { knn: true, number_of_shards: 1, number_of_replicas: 0 } },
          mappings: {
            properties: {
              kind: { type: 'keyword' },
              content: { type: 'text' },
              embedding: {
                type: 'knn_vector',
                dimension: DIMENSION,
                method: { name: 'hnsw', engine: 'lucene', space_type: 'cosinesimil' },
              },
            },
          },
        },
      });
      const bulk = await client.bulk({
        refresh: 'wait_for',
        body: docs.flatMap(({ id, ...source }) => [{ index: { _index: index, _id: id } }, source]),
      });
      expect(bulk.body.errors).toBe(false);

      // The expected winners come from an exact cosine over the documents, not from the engine.
      const byCosine = (candidates: SmokeDoc[]) => [...candidates].sort((a, b) => cosine(query, b.embedding) - cosine(query, a.embedding)).map((d) => d.id);
      const nearestNotes = byCosine(docs.filter((d) => d.kind === 'note'));

      const filtered = await client.search({
        index,
        body: {
          size: 2,
          _source: false,
          query: { knn: { embedding: { vector: query, k: 2, filter: { term: { kind: 'note' } } } } },
        },
      });
      const filteredIds = filtered.body.hits.hits.map((hit) => hit._id);
      expect(filteredIds).toEqual(nearestNotes.slice(0, 2));

      const unfiltered = await client.search({
        index,
        body: { size: 1, _source: false, query: { knn: { embedding: { vector: query, k: 1 } } } },
      });
      expect(unfiltered.body.hits.hits.map((hit) => hit._id)).toEqual([byCosine(docs)[0]]);

      const lexical = await client.search({
        index,
        body: { _source: ['content'], query: { match: { content: 'zebra' } } },
      });
      expect(lexical.body.hits.hits.map((hit) => hit._id)).toEqual(['note-mid']);
    } finally {
      await client.indices.delete({ index, ignore_unavailable: true }).catch(() => undefined);
      await client.close();
    }
  }, ENGINE_TIMEOUT_MS);
});

describe('Neo4j over Bolt', () => {
  it('writes and reads a relationship with properties and reports server 5.26', async () => {
    const driver = neo4j.driver(NEO4J_URI, neo4j.auth.basic(NEO4J_USER, NEO4J_PASSWORD), {
      disableLosslessIntegers: true,
      connectionTimeout: 10_000,
      maxTransactionRetryTime: 5_000,
    });
    try {
      const serverInfo = await driver.getServerInfo();
      expect(serverInfo.agent).toMatch(/^Neo4j\/5\.26\./);

      const components = await driver.executeQuery(
        'CALL dbms.components() YIELD name, versions RETURN name, versions[0] AS version',
      );
      expect(components.records[0]?.get('name')).toBe('Neo4j Kernel');
      expect(components.records[0]?.get('version')).toMatch(/^5\.26\./);

      await driver.executeQuery(
        `CREATE (a:SmokePerson {runId: $runId, name: 'Ada'})
                -[:KNOWS {since: 1843, weight: 0.75, topics: ['engines', 'notes']}]->
                (b:SmokePerson {runId: $runId, name: 'Charles'})`,
        { runId: RUN_ID },
      );
      const read = await driver.executeQuery(
        `MATCH (a:SmokePerson {runId: $runId})-[r:KNOWS]->(b:SmokePerson {runId: $runId})
         RETURN a.name AS from, b.name AS to, r.since AS since, r.weight AS weight, r.topics AS topics`,
        { runId: RUN_ID },
        { routing: neo4j.routing.READ },
      );
      expect(read.records.map((r) => r.toObject())).toEqual([
        { from: 'Ada', to: 'Charles', since: 1843, weight: 0.75, topics: ['engines', 'notes'] },
      ]);
    } finally {
      await driver
        .executeQuery('MATCH (n:SmokePerson {runId: $runId}) DETACH DELETE n', { runId: RUN_ID })
        .catch(() => undefined);
      await driver.close();
    }
  }, ENGINE_TIMEOUT_MS);
});

describe('Redis', () => {
  /** Fails at once instead of queueing commands while reconnecting forever. */
  async function connect(): Promise<Redis> {
    const redis = new Redis(REDIS_URL, {
      lazyConnect: true,
      connectTimeout: 5_000,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    await redis.connect();
    return redis;
  }

  it('reports its version and unblocks XREAD BLOCK when another connection XADDs', async () => {
    const reader = await connect();
    const writer = await connect();
    const stream = `${RUN_ID}:stream`;
    try {
      const info = await reader.info('server');
      const version = /^redis_version:(\S+)/m.exec(info)?.[1] ?? '';
      // Streams with XAUTOCLAIM need 6.2; the Debian 12 package is 7.0.
      const [major = 0, minor = 0] = version.split('.').map(Number);
      expect(major * 100 + minor).toBeGreaterThanOrEqual(602);

      const firstId = await writer.xadd(stream, '*', 'seq', '0');
      const blocked = reader.xread('BLOCK', 10_000, 'STREAMS', stream, firstId ?? '$');
      // Give the reader time to block before the entry it waits for exists.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const secondId = await writer.xadd(stream, '*', 'seq', '1', 'run', RUN_ID);
      const result = await blocked;
      expect(result).toEqual([[stream, [[secondId, ['seq', '1', 'run', RUN_ID]]]]]);
    } finally {
      await writer.del(stream).catch(() => undefined);
      reader.disconnect();
      writer.disconnect();
    }
  }, ENGINE_TIMEOUT_MS);

  it('runs one BullMQ job from Queue to Worker and back through QueueEvents', async () => {
    const url = new URL(REDIS_URL);
    const connection = {
      host: url.hostname,
      port: Number(url.port || 6379),
      // BullMQ requires this for blocking connections; connectTimeout keeps a dead Redis from hanging the test.
      maxRetriesPerRequest: null,
      connectTimeout: 5_000,
      retryStrategy: () => null,
    };
    const name = `${RUN_ID}-queue`;
    const queue = new Queue(name, { connection });
    const events = new QueueEvents(name, { connection });
    const worker = new BullWorker(name, async (job) => ({ sum: (job.data as { a: number; b: number }).a + job.data.b }), {
      connection,
    });
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady(), worker.waitUntilReady()]);
      const job = await queue.add('add', { a: 20, b: 22 });
      const result = await job.waitUntilFinished(events, 30_000);
      expect(result).toEqual({ sum: 42 });
      expect(await job.getState()).toBe('completed');
    } finally {
      await worker.close();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await Promise.all([queue.close(), events.close()]);
    }
  }, ENGINE_TIMEOUT_MS);
});
