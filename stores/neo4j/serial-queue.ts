/**
 * Runs async jobs one at a time in submission order. The embedded adapter applies writes in the
 * order they are called (SQLite calls are synchronous); Neo4j sessions run concurrently, so
 * without this a later upsert of one tunnel could commit before an earlier one.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job, job);
    // The next job waits for this one to settle, whatever its outcome.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
