/**
 * Run as a separate process by tracing-off.test.ts: imports the composition root, asks for
 * tracing, and prints which OpenTelemetry packages the process has loaded by then.
 */
import { createRequire } from 'node:module';
import '../../app/runtime.js';
import { startTracing } from '../../app/tracing/sdk.js';

const tracing = await startTracing('cli');
const loaded = new Set(
  Object.keys(createRequire(import.meta.url).cache)
    .map((file) => /node_modules\/(@opentelemetry\/[^/]+|@temporalio\/interceptors-opentelemetry)\//.exec(file)?.[1])
    .filter((name): name is string => name !== undefined),
);
process.stdout.write(JSON.stringify({ started: tracing !== undefined, loaded: [...loaded].sort() }));
process.exit(0);
