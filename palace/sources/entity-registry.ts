/**
 * The entity registry file (`known_entities.json`, docs/palace-behaviour.md §7.2): read by entity
 * detection while mining, written when `mempalace init` confirms discovered names.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { addRegistryNames, parseRegistry, setWingTopics } from '../../core/entities.js';
import type { EntityProposal, EntityRegistry } from '../../core/entities.js';
import { readOptionalJsonFile } from '../../stores/shared/json-file.js';

/** The registry in `file`; undefined when there is none, refused (naming the rule) when it is not valid. */
export function readEntityRegistry(file: string): EntityRegistry | undefined {
  const json = readOptionalJsonFile(file, 'known_entities');
  return json === undefined ? undefined : parseRegistry(json);
}

export interface ConfirmedEntities {
  registry_file: string;
  people: string[];
  projects: string[];
  /** The wing's topics as the registry now holds them (they make topic tunnels to wings sharing one). */
  topics: string[];
}

/**
 * Add confirmed proposals to the registry: people and projects join their categories; the
 * projects other than the wing's own become the wing's topics, so a later mine links the wing to
 * other wings that name the same projects. Written to a temporary file and renamed over the old
 * one, so a mine reading the registry meanwhile sees the old or the new file, never half of one.
 */
export async function confirmEntities(file: string, wing: string, proposals: readonly EntityProposal[]): Promise<ConfirmedEntities> {
  const people = proposals.filter((p) => p.kind === 'person').map((p) => p.name);
  const projects = proposals.filter((p) => p.kind === 'project').map((p) => p.name);
  const topics = projects.filter((name) => name.toLowerCase() !== wing.toLowerCase());
  let registry = readEntityRegistry(file) ?? {};
  registry = addRegistryNames(registry, 'people', people);
  registry = addRegistryNames(registry, 'projects', projects);
  if (topics.length > 0) registry = setWingTopics(registry, wing, [...(registry.topics_by_wing?.[wing] ?? []), ...topics]);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await fs.writeFile(temporary, `${JSON.stringify(registry, null, 2)}\n`, { mode: 0o600 });
  await fs.rename(temporary, file);
  return { registry_file: file, people, projects, topics: registry.topics_by_wing?.[wing] ?? [] };
}
