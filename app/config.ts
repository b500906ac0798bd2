/**
 * The configuration of this process: its environment, and the machine's facts where the
 * environment is silent (core/config.ts turns both into a `Config`).
 */
import os from 'node:os';
import type { Config } from '../core/config.js';
import { configFromEnv } from '../core/config.js';
import { availableCores } from '../embed/cpu-budget.js';

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return configFromEnv(env, { homeDir: os.homedir(), hostName: os.hostname(), cores: availableCores() });
}
