/**
 * Tracing costs nothing when no OTLP endpoint is set: a process that loads the composition root
 * and asks for tracing loads no module of the OpenTelemetry SDK, its exporters or the Temporal
 * interceptors (only the API, whose tracer is then a no-op). The same probe with an endpoint set
 * finds them loaded, which shows the probe sees such modules at all.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const PROBE = fileURLToPath(new URL('./tracing-probe.child.ts', import.meta.url));

/** The OpenTelemetry packages a fresh process has loaded once it imported the composition root and asked for tracing. */
async function probe(env: Record<string, string>): Promise<{ started: boolean; loaded: string[] }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', PROBE], { env: { ...clean, ...env }, encoding: 'utf8' });
  return JSON.parse(stdout) as { started: boolean; loaded: string[] };
}

describe('tracing switched off', () => {
  it('loads no SDK, exporter or interceptor module without an OTLP endpoint, and the probe sees them with one', async () => {
    // Both processes at once: importing the composition root takes a while on a busy machine.
    // Nothing listens on the endpoint; a started SDK sends nothing until a span ends.
    const [off, on] = await Promise.all([probe({}), probe({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' })]);
    expect(off).toEqual({ started: false, loaded: ['@opentelemetry/api'] });
    expect(on.started).toBe(true);
    expect(on.loaded).toEqual(expect.arrayContaining(['@opentelemetry/sdk-node', '@opentelemetry/exporter-trace-otlp-proto']));
  }, 240_000);
});
