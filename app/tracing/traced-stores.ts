/**
 * Database client spans around every port call of the opened stores (OpenTelemetry database
 * conventions: `db.system.name`, `db.operation.name` = the port method, `db.namespace` = the
 * palace). Applied by the composition root only when tracing is on, so untraced processes call
 * the adapters directly.
 */
import { SpanKind } from '@opentelemetry/api';
import { context, trace } from '@opentelemetry/api';
import { recordFailure, tracer } from '../../core/tracing.js';
import type { PalaceStores } from '../../stores/ports/palace-stores.js';

type PortName = 'drawers' | 'graph' | 'logstream' | 'locks' | 'jobs' | 'credentials';

/** The database behind each port, by profile; a port absent here (file-based credentials) is not traced. */
const SYSTEMS: Record<PalaceStores['profile'], Partial<Record<PortName, string>>> = {
  embedded: { drawers: 'sqlite', graph: 'sqlite', logstream: 'sqlite', locks: 'sqlite', jobs: 'sqlite' },
  cluster: { drawers: 'opensearch', graph: 'neo4j', logstream: 'redis', locks: 'redis', jobs: 'redis', credentials: 'redis' },
};

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as { then?: unknown }).then === 'function';
}

/** `store` with each method call in a client span; methods run on the store itself (private fields keep working). */
function tracedPort<T extends object>(store: T, port: PortName, system: string, namespace: string): T {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop, target);
      if (typeof value !== 'function' || typeof prop === 'symbol' || prop === 'constructor') return value;
      let fn = wrapped.get(prop);
      if (fn === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        fn = (...args: unknown[]) => {
          const span = tracer.startSpan(`${prop} ${port}`, {
            kind: SpanKind.CLIENT,
            attributes: { 'db.system.name': system, 'db.operation.name': prop, 'db.namespace': namespace, 'mempalace.store.port': port },
          });
          let result: unknown;
          try {
            result = context.with(trace.setSpan(context.active(), span), () => method.apply(target, args));
          } catch (e) {
            recordFailure(span, e);
            span.end();
            throw e;
          }
          if (!isThenable(result)) {
            span.end();
            return result;
          }
          return Promise.resolve(result).then(
            (v) => {
              span.end();
              return v;
            },
            (e: unknown) => {
              recordFailure(span, e);
              span.end();
              throw e;
            },
          );
        };
        wrapped.set(prop, fn);
      }
      return fn;
    },
  });
}

/** The stores with their ports traced; the rest (names, peers, close) as opened. */
export function tracedStores<Spec, Progress>(stores: PalaceStores<Spec, Progress>): PalaceStores<Spec, Progress> {
  const systems = SYSTEMS[stores.profile];
  const traced = { ...stores };
  for (const [port, system] of Object.entries(systems) as [PortName, string][]) {
    (traced as Record<PortName, object>)[port] = tracedPort(stores[port], port, system, stores.palace);
  }
  return traced;
}
