/**
 * Reading a project's configuration file (`mempalace.yaml`, fallback `mempal.yaml`) from its
 * directory; core/project-config.ts parses and validates it.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { invalidArgument } from '../../core/errors.js';
import type { ProjectConfig } from '../../core/project-config.js';
import { PROJECT_CONFIG_FILES, parseProjectConfig, wingFromDirectory } from '../../core/project-config.js';
import { validateName } from '../../core/validate.js';

/**
 * Read the project configuration of `projectDir`. Without a file the wing is the slug of the
 * directory's basename (validated; pass `wingOverride` when that name is not a valid wing).
 */
export async function loadProjectConfig(projectDir: string, wingOverride?: string): Promise<ProjectConfig> {
  const root = resolve(projectDir);
  for (const name of PROJECT_CONFIG_FILES) {
    const file = join(root, name);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw invalidArgument('config', 'readable', `${file}: cannot be read: ${(e as Error).message}`, { file });
    }
    return parseProjectConfig(text, file, root, wingOverride);
  }
  const wing = wingOverride !== undefined ? validateName('wing', wingOverride) : wingFromDirectory(root);
  return {
    wing,
    rooms: [{ name: 'general', description: 'All project files', keywords: ['general'] }],
    configFile: null,
    warnings: [`No ${PROJECT_CONFIG_FILES[0]} in ${root}: using wing "${wing}" from the directory name; directories with the same name share this wing.`],
  };
}
