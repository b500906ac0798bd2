/**
 * The graph store on Neo4j beside the embedded (SQLite) adapter, on the same data and machine,
 * through the palace operations the MCP tools call: kg_add (one client, and four at once),
 * kg_supersede, kg_query (with and without as_of), kg_timeline, kg_stats, and the reads behind
 * traverse / follow_tunnels / hallway listing (tunnels of a wing, hallways of a wing).
 *
 * Run: `source deploy/local/env.sh && npx tsx bench/neo4j.bench.ts [--write]`; `--write` replaces
 * the "Graph: Neo4j vs embedded" section of bench/README.md with the table printed. Neo4j data
 * lives under a throwaway palace name and is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../app/config.js';
import { kgAddOperation, kgQueryOperation, kgStatsOperation, kgSupersedeOperation, kgTimelineOperation, type KgContext } from '../palace/kg/kg.js';
import { listHallwaysOperation } from '../palace/graph/hallways.js';
import { listTunnelsOperation } from '../palace/graph/tunnels.js';
import { openSqliteGraphStore } from '../stores/embedded/sqlite-graph-store.js';
import { openNeo4jGraphStore } from '../stores/neo4j/neo4j-graph-store.js';
import type { GraphStore, HallwayWrite, TunnelWrite } from '../stores/ports/graph-store.js';
import type { Static, TObject, TSchema } from 'typebox';
import type { Operation } from '../palace/operation.js';
import { invoke } from '../palace/operation.js';
import { publishTable } from './lib/report.js';
import { machine, ratePerSecond, seeded } from './lib/stats.js';

/** An operation called as a face calls it: its input checked against its schema first. */
const operationCall = <In extends TObject, Out extends TSchema, Ctx>(op: Operation<In, Out, Ctx>) => (ctx: Ctx, input: Partial<Static<In>> = {}) =>
  invoke(op, input, ctx, undefined);
const kgAdd = operationCall(kgAddOperation);
const kgQuery = operationCall(kgQueryOperation);
const kgStats = operationCall(kgStatsOperation);
const kgSupersede = operationCall(kgSupersedeOperation);
const kgTimeline = operationCall(kgTimelineOperation);
const listHallways = operationCall(listHallwaysOperation);
const listTunnels = operationCall(listTunnelsOperation);

const PREDICATES = ['works_on', 'knows', 'uses', 'owns', 'reviews', 'depends_on', 'mentors', 'blocks'];
/** The workload, the same on both profiles: sizes of the graph built and of each timed phase. */
const WORKLOAD = { entities: 300, facts: 3_000, clients: 4, perClient: 500, supersedes: 300, wings: 20, tunnels: 400, hallwaysPerWing: 100, reads: 1_000 };

interface Profile {
  name: string;
  open(): Promise<GraphStore>;
  drop(graph: GraphStore): Promise<void>;
}

const entity = (i: number) => `Entity ${i % WORKLOAD.entities}`;
const factArgs = (i: number) => ({
  subject: entity(i),
  predicate: PREDICATES[i % PREDICATES.length]!,
  object: entity(i * 7 + 3),
  ...(i % 3 === 0 ? { valid_from: `20${10 + (i % 15)}-0${1 + (i % 9)}-01` } : {}),
});

async function rate(n: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await op(i);
  return ratePerSecond(n, started);
}

async function measure(p: Profile) {
  const graph = await p.open();
  const ctx: KgContext = { graph };
  try {
    const addSequential = await rate(WORKLOAD.facts, (i) => kgAdd(ctx, factArgs(i)));
    const concurrentStarted = performance.now();
    await Promise.all(Array.from({ length: WORKLOAD.clients }, (_, c) =>
      (async () => {
        for (let i = 0; i < WORKLOAD.perClient; i++) await kgAdd(ctx, factArgs(WORKLOAD.facts + c * WORKLOAD.perClient + i));
      })()));
    const addConcurrent = ratePerSecond(WORKLOAD.clients * WORKLOAD.perClient, concurrentStarted);
    const supersede = await rate(WORKLOAD.supersedes, (i) =>
      kgSupersede(ctx, { subject: `Bot ${i % 30}`, predicate: 'uses_model', old_object: `Model ${i}`, new_object: `Model ${i + 30}`,
        at: `2025-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z` }));

    const rnd = seeded(7);
    const pick = () =>
      entity(Math.floor(rnd() * WORKLOAD.entities));
    const query = await rate(WORKLOAD.reads, () => kgQuery(ctx, { entity: pick() }));
    const queryAsOf = await rate(WORKLOAD.reads, () => kgQuery(ctx, { entity: pick(), as_of: '2018-06-01' }));
    const timeline = await rate(WORKLOAD.reads, () => kgTimeline(ctx, { entity: pick() }));
    const stats = await rate(100, () => kgStats(ctx));

    const tunnels: TunnelWrite[] = Array.from({ length: WORKLOAD.tunnels }, (_, i) => {
      const a = `wing-${i % WORKLOAD.wings}`;
      const b = `wing-${(i * 3 + 1) % WORKLOAD.wings}`;
      return { id: `tn${i}`, source: { wing: a, room: `room-${i % 13}` }, target: { wing: b, room: `room-${i % 11}` }, label: `t${i}`, kind: 'explicit',
        source_wing_key: a, target_wing_key: b, at: `2030-01-01T00:00:00.${String(i).padStart(6, '0')}+00:00`, by: null };
    });
    for (let i = 0; i < WORKLOAD.tunnels; i += 50) await graph.tunnelUpsert(tunnels.slice(i, i + 50));
    for (let w = 0; w < WORKLOAD.wings; w++) {
      const hallways: HallwayWrite[] = Array.from({ length: WORKLOAD.hallwaysPerWing }, (_, i) => ({
        id: `h${w}_${i}`,
        wing: `wing-${w}`,
        entity_a: `Person ${i}`,
        entity_b: `Person ${i + 1}`,
        co_occurrence_count: 2 + (i % 5),
        rooms: ['a', 'b'],
        label: '',
        created_at: '2030-01-01T00:00:00+00:00',
        created_by: 'auto',
      }));
      await graph.hallwaysReplaceWing(`wing-${w}`, hallways);
    }
    const tunnelsOfWing = await rate(WORKLOAD.reads, (i) => listTunnels({ graph }, { wing: `wing-${i % WORKLOAD.wings}` }));
    const hallwaysOfWing = await rate(WORKLOAD.reads, (i) => listHallways({ graph }, { wing: `wing-${i % WORKLOAD.wings}` }));
    return { addSequential, addConcurrent, supersede, query, queryAsOf, timeline, stats, tunnelsOfWing, hallwaysOfWing };
  } finally {
    await p.drop(graph);
  }
}

function embeddedProfile(): Profile {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mp-bench-graph-'));
  return {
    name: 'embedded',
    open: () => openSqliteGraphStore(dir),
    drop: async (graph) => {
      await graph.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function neo4jProfile(): Profile {
  const palaceName = `bench-graph-${randomBytes(4).toString('hex')}`;
  return {
    name: 'neo4j',
    open: () => openNeo4jGraphStore({ neo4j: loadConfig().neo4j, palaceName }),
    drop: async (graph) => {
      const store = graph as Awaited<ReturnType<typeof openNeo4jGraphStore>>;
      await store.dropPalace();
      await store.close();
    },
  };
}

const fmt = (n: number) => n.toFixed(0);
const NOTE =
  "Each Neo4j call is one managed transaction over Bolt (begin, run, commit), plus Cypher execution in a JVM that shares the 2 cores with the other engines; on this machine an empty `RETURN 1` managed read took ~4 ms, which bounds a single caller to a few hundred calls per second. Neo4j figures move with the host's load (printed above); read them as orders of magnitude. kg_add and kg_supersede lock the subject node so concurrent writers of one subject serialise; tunnel and hallway lists are sorted in the adapter by code point.";

async function main(): Promise<void> {
  const neo4j = await measure(neo4jProfile());
  const embedded = await measure(embeddedProfile());
  const row = (label: string, key: keyof typeof neo4j, unit: string) => `| ${label} | ${fmt(neo4j[key])} ${unit} | ${fmt(embedded[key])} ${unit} |`;
  const table = [
    `Measured ${machine()}, 1-min load average ${
      os.loadavg()[0]!.toFixed(1)
    } at the end; Neo4j 5.26.31 Community (embedded launcher, deploy/local, 512 MiB heap, 64 MiB page cache) on localhost over Bolt, neo4j-driver 6.3.0; embedded: SQLite WAL, synchronous=NORMAL. Same data for both, through the palace operations: ${
      WORKLOAD.facts + WORKLOAD.clients * WORKLOAD.perClient
    } facts over ${WORKLOAD.entities} entities and ${PREDICATES.length} predicates (every third with a valid_from), ${WORKLOAD.tunnels} tunnels over ${WORKLOAD.wings} wings, ${WORKLOAD.hallwaysPerWing} hallways per wing.`,
    '',
    '| measure | Neo4j | embedded |',
    '|---|---|---|',
    row(`kg_add, one client, sequential (${WORKLOAD.facts} facts)`, 'addSequential', 'adds/s'),
    row(`kg_add, ${WORKLOAD.clients} concurrent callers × ${WORKLOAD.perClient}, one process`, 'addConcurrent', 'adds/s'),
    row(`kg_supersede, sequential (${WORKLOAD.supersedes})`, 'supersede', 'ops/s'),
    row(
      `kg_query, direction both, random entity (~${Math.round((2 * (WORKLOAD.facts + WORKLOAD.clients * WORKLOAD.perClient)) / WORKLOAD.entities)} facts each)`,
      'query',
      'queries/s',
    ),
    row('kg_query with as_of', 'queryAsOf', 'queries/s'),
    row('kg_timeline of an entity (limit 100)', 'timeline', 'reads/s'),
    row('kg_stats', 'stats', 'reads/s'),
    row('list_tunnels of a wing (traverse / follow_tunnels read)', 'tunnelsOfWing', 'reads/s'),
    row(`hallways of a wing (${WORKLOAD.hallwaysPerWing} records)`, 'hallwaysOfWing', 'reads/s'),
    '',
    NOTE,
  ].join('\n');
  publishTable('## Graph: Neo4j vs embedded', 'source deploy/local/env.sh && npx tsx bench/neo4j.bench.ts --write', table);
}

await main();
