import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The arrows of ARCHITECTURE.md's layout, one entry per folder: what its files may not import.
// Project folders are matched on relative specifiers (`../cli/x.js`, `../../app/y.js`), static
// and dynamic (`import()`) alike; packages by name. Tests and benchmarks compose freely.
const ADAPTERS = '(?:\\.\\./)+stores/(?:embedded|opensearch|neo4j|redis)/';
const STORE_PICKER = '(?:\\.\\./)+stores/open\\.js$';
const DATABASE_CLIENTS = ['better-sqlite3', 'hnswlib-node', '@opensearch-project/opensearch', 'neo4j-driver', 'ioredis', 'redis'];
const TEMPORAL = ['@temporalio/activity', '@temporalio/client', '@temporalio/worker', '@temporalio/workflow'];
const QUEUE_ENGINE = ['bullmq'];

/** `folders` are project folders (relative to the repo root) the files may not import. */
function folders(...names) {
  return `^(?:\\.\\./)+(?:${names.join('|')})/`;
}
function packages(names) {
  return `^(?:${names.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})(?:/|$)`;
}

const LAYERS = [
  { files: ['core/**/*.ts'], why: 'core/ imports nothing of the project', banned: [folders('embed', 'stores', 'palace', 'activities', 'workflows', 'mcp', 'api', 'app', 'cli'), packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['embed/**/*.ts'], why: 'embed/ uses core/ only', banned: [folders('stores', 'palace', 'activities', 'workflows', 'mcp', 'api', 'app', 'cli'), packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/*.ts'], ignores: ['stores/open.ts'], why: 'a port names no adapter and no database client', banned: [folders('palace', 'activities', 'workflows', 'mcp', 'api', 'app', 'cli'), '^\\./(?:embedded|opensearch|neo4j|redis)/', packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/open.ts'], why: 'stores/open.ts picks adapters; the adapters hold the clients', banned: [folders('palace', 'activities', 'workflows', 'mcp', 'api', 'app', 'cli'), packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/*/**/*.ts'], why: 'an adapter implements ports for the layers above it', banned: [folders('palace', 'activities', 'workflows', 'mcp', 'api', 'app', 'cli'), packages([...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['palace/**/*.ts'], why: 'palace/ uses core/, embed/ and the ports of stores/ only', banned: [folders('activities', 'workflows', 'mcp', 'api', 'app', 'cli'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  // Activities implement the activity interfaces their orchestrations declare (workflows/activity-types.ts, workflows/reembed.ts), and nothing else of workflows/.
  { files: ['activities/**/*.ts'], why: 'activities/ call palace/ and the ports', banned: [folders('mcp', 'api', 'app', 'cli'), '^(?:\\.\\./)+workflows/(?!activity-types\\.js$|reembed\\.js$)', ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['workflows/**/*.ts'], ignores: ['workflows/temporal/**', 'workflows/queues/**'], why: 'orchestration is pure; the engines live in workflows/temporal/ and workflows/queues/', banned: [folders('mcp', 'api', 'app', 'cli'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['workflows/temporal/**/*.ts'], why: 'the Temporal engine receives its ports', banned: [folders('mcp', 'api', 'app', 'cli'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...QUEUE_ENGINE])] },
  // BullMQ keeps its keys under the palace's Redis prefix, so the queues share that one naming rule of stores/redis/connection.ts.
  { files: ['workflows/queues/**/*.ts'], why: 'the BullMQ engine receives its ports', banned: [folders('mcp', 'api', 'app', 'cli'), '^(?:\\.\\./)+stores/(?:embedded|opensearch|neo4j)/', '^(?:\\.\\./)+stores/redis/(?!connection\\.js$)', STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL])] },
  { files: ['mcp/**/*.ts'], why: 'mcp/ calls palace/ through interfaces declared inward', banned: [folders('api', 'app', 'cli', 'activities', 'workflows'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['api/**/*.ts'], why: 'api/ calls palace/ (and serves mcp/) through interfaces declared inward', banned: [folders('app', 'cli', 'activities', 'workflows'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['cli/**/*.ts'], why: 'cli/ gets its runtime from app/ and calls palace/', banned: [folders('workflows'), ADAPTERS, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['app/**/*.ts'], why: 'app/ composes the layers below the entry points; engines and clients come through their folders', banned: [folders('mcp', 'api', 'cli'), ADAPTERS, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
];

function layerRules({ files, ignores, why, banned }) {
  const message = `import against the layering of ARCHITECTURE.md: ${why}`;
  return {
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': ['error', { patterns: banned.map((regex) => ({ regex, message })) }],
      // esquery's regex literals cannot hold a slash, so it is written as \x2F there.
      'no-restricted-syntax': ['error', ...banned.map((regex) => ({ selector: `ImportExpression > Literal.source[value=/${regex.replaceAll('\\/', '/').replaceAll('/', '\\x2F')}/]`, message }))],
    },
  };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.engines/**', 'deploy/local/**/target/**', 'api/dashboard/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly', TextEncoder: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...LAYERS.map(layerRules),
);
