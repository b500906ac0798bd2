import path from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const ROOT = path.dirname(fileURLToPath(import.meta.url));

// The arrows of ARCHITECTURE.md's layout, one entry per folder: what its files may not import.
// Project folders are matched on relative specifiers (`../cli/x.js`, `../../app/y.js`), static
// and dynamic (`import()`) alike; packages by name. Tests and benchmarks compose freely.
const ADAPTERS = '(?:\\.\\./)+stores/(?:embedded|opensearch|neo4j|redis)/';
const STORE_PICKER = '(?:\\.\\./)+stores/open\\.js$';
const DATABASE_CLIENTS = ['better-sqlite3', 'hnswlib-node', '@opensearch-project/opensearch', 'neo4j-driver', 'ioredis', 'redis'];
const TEMPORAL = ['@temporalio/activity', '@temporalio/client', '@temporalio/interceptors-opentelemetry', '@temporalio/worker', '@temporalio/workflow'];
const QUEUE_ENGINE = ['bullmq'];
// core/ is pure: files, processes and the host are read by the layers that hand core/ the values.
const HOST_IO = ['node:fs', 'fs', 'node:child_process', 'child_process', 'node:os', 'os'];

/** `folders` are project folders (relative to the repo root) the files may not import. */
function folders(...names) {
  return `^(?:\\.\\./)+(?:${names.join('|')})/`;
}
function packages(names) {
  return `^(?:${names.map((n) => n.replace(/[/.]/g, '\\$&')).join('|')})(?:/|$)`;
}

// Jobs (ARCHITECTURE.md `jobs/`): the JobEngine port is in stores/ports/, so palace/ never
// reaches jobs/; the faces may reach the job model at its root, the requests and the job
// operations; the kinds' folders and the engines import inward, never the other way.
const JOB_KIND_OR_ENGINE = '^(?:\\.\\./)+jobs/(?!job\\.js$|requests\\.js$|operations\\.js$)';
const JOB_ENGINES = '^(?:\\./|(?:\\.\\./)+)(?:jobs/)?engines/';
// The workflow sandbox: the files Temporal's workflow bundle (jobs/workflows.ts) reaches.
const ORCHESTRATION = ['jobs/workflows.ts', 'jobs/workflow-run.ts', 'jobs/workflow-types.ts', 'jobs/progress.ts', 'jobs/*/orchestration.ts',
  'jobs/*/workflow.ts'];

const LAYERS = [
  { files: ['core/**/*.ts'], why: 'core/ imports nothing of the project and does no I/O (no fs, child_process or os)',
    banned: [folders('embed', 'stores', 'palace', 'jobs', 'mcp', 'api', 'app', 'cli'),
      packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE, ...HOST_IO])] },
  { files: ['embed/**/*.ts'], why: 'embed/ uses core/ only',
    banned: [folders('stores', 'palace', 'jobs', 'mcp', 'api', 'app', 'cli'), packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/*.ts'], ignores: ['stores/open.ts'], why: 'a port names no adapter and no database client',
    banned: [folders('palace', 'jobs', 'mcp', 'api', 'app', 'cli'), '^\\./(?:embedded|opensearch|neo4j|redis)/',
      packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/open.ts'], why: 'stores/open.ts picks adapters; the adapters hold the clients',
    banned: [folders('palace', 'jobs', 'mcp', 'api', 'app', 'cli'), packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['stores/*/**/*.ts'], why: 'an adapter implements ports for the layers above it',
    banned: [folders('palace', 'jobs', 'mcp', 'api', 'app', 'cli'), packages([...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['palace/**/*.ts'], why: 'palace/ uses core/, embed/ and the ports of stores/ (the JobEngine port included)',
    banned: [folders('jobs', 'mcp', 'api', 'app', 'cli'), ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['jobs/**/*.ts'], ignores: ['jobs/engines/**', ...ORCHESTRATION], why: 'a job kind calls palace/ and the ports; the engines run it from outside',
    banned: [folders('mcp', 'api', 'app', 'cli'), JOB_ENGINES, ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ORCHESTRATION, why: 'orchestration is pure; only it imports @temporalio/workflow',
    banned: [folders('mcp', 'api', 'app', 'cli'), JOB_ENGINES, ADAPTERS, STORE_PICKER,
      packages([...DATABASE_CLIENTS, ...TEMPORAL.filter((p) => p !== '@temporalio/workflow'), ...QUEUE_ENGINE])] },
  { files: ['jobs/engines/local/**/*.ts'], why: 'the local runner receives its ports and runs the kinds in-process',
    banned: [folders('mcp', 'api', 'app', 'cli'), '^\\.\\./(?:temporal|queues)/', ADAPTERS, STORE_PICKER,
      packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['jobs/engines/temporal/**/*.ts'], why: 'the Temporal engine receives its ports; workflow code is orchestration',
    banned: [folders('mcp', 'api', 'app', 'cli'), '^\\.\\./(?:local|queues)/', ADAPTERS, STORE_PICKER,
      packages([...DATABASE_CLIENTS, '@temporalio/workflow', ...QUEUE_ENGINE])] },
  { files: ['jobs/engines/queues/**/*.ts'], why: 'the BullMQ engine receives its ports',
    banned: [folders('mcp', 'api', 'app', 'cli'), '^\\.\\./(?:local|temporal)/', ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL])] },
  { files: ['mcp/**/*.ts'], why: 'mcp/ calls palace/ through interfaces declared inward, and starts jobs through their requests and the JobEngine port',
    banned: [folders('api', 'app', 'cli'), JOB_KIND_OR_ENGINE, ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['api/**/*.ts'],
    why: 'api/ calls palace/ (and serves mcp/) through interfaces declared inward, and starts jobs through their requests and the JobEngine port',
    banned: [folders('app', 'cli'), JOB_KIND_OR_ENGINE, ADAPTERS, STORE_PICKER, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['cli/**/*.ts'], why: 'cli/ gets its runtime from app/ and calls palace/',
    banned: [JOB_KIND_OR_ENGINE, ADAPTERS, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
  { files: ['app/**/*.ts'], why: 'app/ composes the layers below the entry points; engines and clients come through their folders',
    banned: [folders('mcp', 'api', 'cli'), ADAPTERS, packages([...DATABASE_CLIENTS, ...TEMPORAL, ...QUEUE_ENGINE])] },
];

function layerRules({ files, ignores, why, banned }) {
  const message = `import against the layering of ARCHITECTURE.md: ${why}`;
  return {
    files,
    ...(ignores ? { ignores } : {}),
    rules: {
      'no-restricted-imports': ['error', { patterns: banned.map((regex) => ({ regex, message })) }],
      // esquery's regex literals cannot hold a slash, so it is written as \x2F there.
      'no-restricted-syntax': ['error',
        ...banned.map((regex) => ({ selector: `ImportExpression > Literal.source[value=/${regex.replaceAll('\\/', '/').replaceAll('/', '\\x2F')}/]`,
          message })
        )],
    },
  };
}

const ORCHESTRATION_FILE = new RegExp(`^(?:${ORCHESTRATION.map((g) => g.replaceAll('.', '\\.').replaceAll('*', '[^/]+')).join('|')})$`);

/**
 * What Temporal's workflow bundle may import: @temporalio/workflow, the other orchestration files,
 * and types (`import type`/`export type`, erased before bundling). Anything else would put I/O,
 * Node built-ins or nondeterminism into workflow code, which replays.
 */
const workflowSandbox = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      outside: `the workflow sandbox imports only @temporalio/workflow, the orchestration files (${
        ORCHESTRATION.join(', ')
      }) and types; '{{source}}' is none of these`,
    },
  },
  create(context) {
    const here = path.relative(ROOT, context.filename).split(path.sep).join('/');
    const allowed = (source) => {
      if (source === '@temporalio/workflow') return true;
      if (typeof source !== 'string' || !source.startsWith('.')) return false;
      return ORCHESTRATION_FILE.test(path.posix.join(path.posix.dirname(here), source).replace(/\.js$/, '.ts'));
    };
    const check = (node, source, typeOnly) => {
      if (!typeOnly && !allowed(source)) context.report({ node, messageId: 'outside', data: { source: String(source) } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value, node.importKind === 'type'),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, node.exportKind === 'type'),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => check(node, node.source.type === 'Literal' ? node.source.value : undefined, false),
    };
  },
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.engines/**', 'deploy/local/**/target/**', 'api/dashboard/**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly',
        setInterval: 'readonly', clearInterval: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextDecoder: 'readonly',
        TextEncoder: 'readonly', fetch: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...LAYERS.map(layerRules),
  { files: ORCHESTRATION, plugins: { mempalace: { rules: { 'workflow-sandbox': workflowSandbox } } }, rules: { 'mempalace/workflow-sandbox': 'error' } },
);
