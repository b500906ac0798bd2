// Worker entry used when the embedder runs from TypeScript sources (tsx, vitest): neither tsx's
// --import hook (main thread only on Node 20) nor vitest's transform reaches worker threads, so the
// TypeScript worker is loaded through tsx's API. dist/ starts the compiled minilm-worker.js directly.
import { tsImport } from 'tsx/esm/api';

await tsImport('./minilm-worker.ts', import.meta.url);
