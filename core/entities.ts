/**
 * Entities: the `entities` label of a drawer (docs/palace-behaviour.md §4.8; docs/decisions.md palace 5
 * extends it to conversation drawers), the entity registry `known_entities.json` (docs/palace-behaviour.md §7.2), and the
 * pure parts of entity discovery at init (docs/palace-behaviour.md §7.1): project names from manifests, people from git
 * authors, and people/projects from prose.
 */
import { parse as parseToml } from 'smol-toml';
import { COMMON_WORDS } from './data/common-words.js';
import { ENTITY_LOCALES, type EntityLocale } from './data/entity-locales.js';
import { KNOWN_SYSTEMS } from './data/known-systems.js';
import { codePointPrefix } from './chunking.js';
import { invalidArgument } from './errors.js';
import { compareCodePoints } from './scan.js';

export const MAX_ENTITIES_PER_DRAWER = 25;

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Locales for the configured languages (default English); an unknown code is bad input. */
export function entityLocales(languages: readonly string[] = ['en']): EntityLocale[] {
  const list = languages.length === 0 ? ['en'] : languages;
  return list.map((code) => {
    const locale = ENTITY_LOCALES[code.trim().toLowerCase()];
    if (!locale)
      throw invalidArgument('entity_languages', 'known_language',
        `unknown entity language ${JSON.stringify(code)}; known: ${Object.keys(ENTITY_LOCALES).join(', ')}`);
    return locale;
  });
}

/** Whole-word, case-insensitive pattern for a name in the given word class. */
function nameRegex(name: string, wordClass: string, flags = 'iu'): RegExp {
  const spaced = escapeRegex(name.trim()).replace(/\s+/g, String.raw`\s+`);
  return new RegExp(`(?<!${wordClass})${spaced}(?!${wordClass})`, flags);
}

const KNOWN_SYSTEM_PATTERNS = [...KNOWN_SYSTEMS]
  .sort((a, b) => b.length - a.length)
  .map((name) => ({ name, re: nameRegex(name, String.raw`[\p{L}\p{N}_]`, 'giu') }));

/**
 * Count known multi-word systems (longest first) under their canonical spelling and blank their
 * spans so the single-word pass does not split them.
 */
export function knownSystemsPrepass(window: string): { window: string; counts: Map<string, number> } {
  const counts = new Map<string, number>();
  let text = window;
  for (const { name, re } of KNOWN_SYSTEM_PATTERNS) {
    re.lastIndex = 0;
    text = text.replace(re, (m) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return ' '.repeat(m.length);
    });
  }
  return { window: text, counts };
}

/** Single-word candidates of the locales, minus stop-words and common words. */
function candidateWords(window: string, locales: readonly EntityLocale[], minLength: number): string[] {
  const words: string[] = [];
  for (const locale of locales) {
    const found = new Map<number, string>();
    for (const source of locale.candidatePatterns) {
      for (const m of window.matchAll(new RegExp(source, 'gu'))) {
        // Both English patterns can match at one position; the longer (CamelCase) wins.
        const prev = found.get(m.index);
        if (prev === undefined || m[0].length > prev.length) found.set(m.index, m[0]);
      }
    }
    for (const w of found.values()) {
      if (locale.stopWords.has(w) || COMMON_WORDS.has(w.toLowerCase()) || Array.from(w).length < minLength) continue;
      words.push(w);
    }
  }
  return words;
}

export interface EntityDetectorOptions {
  /** Names from the registry (docs/palace-behaviour.md §7.2 `registryNames`). */
  knownNames?: readonly string[];
  languages?: readonly string[];
}

/**
 * Compile the docs/palace-behaviour.md §4.8 detector once per registry and reuse it for every drawer. The result is the
 * sorted (code-point order) list of at most 25 names; join it with `;` for the metadata value.
 */
export function compileEntityDetector(options: EntityDetectorOptions = {}): (text: string) => string[] {
  const locales = entityLocales(options.languages);
  const wordClass = locales.length === 1 ? locales[0]!.wordClass : `(?:${locales.map((l) => l.wordClass).join('|')})`;
  const known = [...new Set((options.knownNames ?? []).map((n) => n.trim()).filter((n) => n !== ''))]
    .map((name) => ({ name, re: nameRegex(name, wordClass) }));
  return (text: string) => {
    const matched = new Map<string, string>();
    const add = (name: string) => {
      const key = name.toLowerCase();
      if (!matched.has(key)) matched.set(key, name);
    };
    for (const { name, re } of known) if (re.test(text)) add(name);
    const { window, counts } = knownSystemsPrepass(codePointPrefix(text, 5000));
    const freq = new Map(counts);
    for (const w of candidateWords(window, locales, 1)) freq.set(w, (freq.get(w) ?? 0) + 1);
    for (const [w, c] of freq) if (c >= 2 && Array.from(w).length > 2) add(w);
    return [...matched.values()].sort(compareCodePoints).slice(0, MAX_ENTITIES_PER_DRAWER);
  };
}

// ---------------------------------------------------------------------------------------------
// The registry (docs/palace-behaviour.md §7.2)

export type RegistryCategory = string[] | Record<string, string | null>;

export interface EntityRegistry {
  [category: string]: RegistryCategory | Record<string, string[]> | undefined;
  topics_by_wing?: Record<string, string[]>;
}

/** Validate the parsed JSON of `known_entities.json`. */
export function parseRegistry(json: unknown): EntityRegistry {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw invalidArgument('known_entities', 'object', 'known_entities.json must hold a JSON object');
  const out: EntityRegistry = {};
  for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
    const fail = (what: string) => invalidArgument(`known_entities.${key}`, 'registry_shape', `known_entities.json: ${key} ${what}`);
    if (key === 'topics_by_wing') {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail('must map wings to lists of topics');
      const topics: Record<string, string[]> = {};
      for (const [wing, list] of Object.entries(value)) {
        if (!Array.isArray(list) || !list.every((t) => typeof t === 'string')) throw fail(`.${wing} must be a list of strings`);
        topics[wing] = [...list];
      }
      out.topics_by_wing = topics;
    } else if (Array.isArray(value)) {
      if (!value.every((n) => typeof n === 'string')) throw fail('must be a list of names');
      out[key] = [...value];
    } else if (value !== null && typeof value === 'object') {
      const map: Record<string, string | null> = {};
      for (const [name, code] of Object.entries(value)) {
        if (code !== null && typeof code !== 'string') throw fail(`.${name} must be a string or null`);
        map[name] = code;
      }
      out[key] = map;
    } else {
      throw fail('must be a list of names or a map of name to code');
    }
  }
  return out;
}

/** All names of all categories and all topics of all wings (not the wing keys). */
export function registryNames(registry: EntityRegistry): string[] {
  const names: string[] = [];
  for (const [key, value] of Object.entries(registry)) {
    if (value === undefined) continue;
    if (key === 'topics_by_wing') {
      for (const topics of Object.values(value as Record<string, string[]>)) names.push(...topics);
    } else if (Array.isArray(value)) {
      names.push(...value);
    } else {
      names.push(...Object.keys(value));
    }
  }
  return names;
}

/** Union names into a category case-insensitively, keeping existing order and spelling. */
export function addRegistryNames(registry: EntityRegistry, category: string, names: readonly string[]): EntityRegistry {
  if (category === 'topics_by_wing') throw invalidArgument('category', 'not_topics', 'use setWingTopics for topics_by_wing');
  const current = registry[category] as RegistryCategory | undefined;
  const fresh = newNames(names, registryCategoryNames(registry, category));
  let next: RegistryCategory;
  if (current === undefined || Array.isArray(current)) next = [...(current ?? []), ...fresh];
  else next = { ...current, ...Object.fromEntries(fresh.map((n) => [n, null])) };
  return { ...registry, [category]: next };
}

/** The trimmed, non-blank names not among `known` nor earlier in `names`, compared case-insensitively (first spelling kept). */
function newNames(names: readonly string[], known: readonly string[]): string[] {
  const seen = new Set(known.map((n) => n.toLowerCase()));
  const fresh: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === '' || seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    fresh.push(name);
  }
  return fresh;
}

/** The names of one category (not topics_by_wing), whichever form the registry holds it in. */
export function registryCategoryNames(registry: EntityRegistry, category: string): string[] {
  const value = registry[category] as RegistryCategory | undefined;
  if (value === undefined) return [];
  return Array.isArray(value) ? value : Object.keys(value);
}

/** Replace a wing's topics (case-insensitive de-duplication, first spelling kept; [] removes). */
export function setWingTopics(registry: EntityRegistry, wing: string, topics: readonly string[]): EntityRegistry {
  const list = newNames(topics, []);
  const byWing = { ...(registry.topics_by_wing ?? {}) };
  if (list.length === 0) delete byWing[wing];
  else byWing[wing] = list;
  return { ...registry, topics_by_wing: byWing };
}

// ---------------------------------------------------------------------------------------------
// Discovery at init (docs/palace-behaviour.md §7.1), the pure parts: callers read the files and run git.

export type EntityKind = 'person' | 'project' | 'uncertain';

export interface EntityProposal {
  name: string;
  kind: EntityKind;
  confidence: number;
  source: 'manifest' | 'git' | 'claude_code' | 'prose';
  /** Commits, sessions or prose mentions behind the proposal. */
  evidence: number;
}

export const MANIFEST_FILES = ['pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod'] as const;
export type ManifestFile = (typeof MANIFEST_FILES)[number];

/** The project name a manifest declares, or undefined (unparsable files give undefined). */
export function projectNameFromManifest(file: ManifestFile, text: string): string | undefined {
  const str = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined);
  const get = (o: unknown, ...path: string[]) =>
    path.reduce<unknown>((acc, k) => (acc !== null && typeof acc === 'object' ? (acc as Record<string, unknown>)[k] : undefined), o);
  try {
    switch (file) {
      case 'pyproject.toml': {
        const doc = parseToml(text);
        return str(get(doc, 'project', 'name')) ?? str(get(doc, 'tool', 'poetry', 'name'));
      }
      case 'package.json':
        return str(get(JSON.parse(text), 'name'));
      case 'Cargo.toml':
        return str(get(parseToml(text), 'package', 'name'));
      case 'go.mod': {
        const m = /^\s*module\s+("?)([^\s"]+)\1/mu.exec(text);
        return m ? str(m[2]!.split('/').filter((p) => p !== '').pop()) : undefined;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

export interface FoundManifest {
  /** POSIX path of the manifest relative to the repository (or scan) root. */
  relativePath: string;
  file: ManifestFile;
  name: string;
}

/** The shallowest manifest wins, ties by manifest priority, then path. */
export function pickManifest(found: readonly FoundManifest[]): FoundManifest | undefined {
  const depth = (p: string) => p.split('/').length;
  return [...found].sort((a, b) =>
    depth(a.relativePath) - depth(b.relativePath)
    || MANIFEST_FILES.indexOf(a.file) - MANIFEST_FILES.indexOf(b.file)
    || compareCodePoints(a.relativePath, b.relativePath)
  )[0];
}

const BOT_PREFIXES = ['dependabot', 'renovate', 'github-actions', 'actions-user', 'bot-', 'snyk', 'greenkeeper', 'semantic-release', 'allcontributors',
  'auto-format', 'pre-commit-ci'];

export function isBotAuthor(name: string, email: string): boolean {
  const n = name.trim().toLowerCase();
  return n.includes('[bot]') || BOT_PREFIXES.some((p) => n.startsWith(p)) || n.endsWith('-bot')
    || /(?<![\p{L}\p{N}_])bot(?![\p{L}\p{N}_])/u.test(n) || n.endsWith('-autoroll') || email.toLowerCase().includes('bot@');
}

/** At least two space-separated parts, first and last capitalised. */
export function looksLikeRealName(name: string): boolean {
  const parts = name.trim().split(/\s+/);
  const capital = (p: string) => /^\p{Lu}/u.test(p);
  return parts.length >= 2 && capital(parts[0]!) && capital(parts.at(-1)!);
}

export interface GitCommitAuthor {
  name: string;
  email: string;
}

export interface RepositoryHistory {
  /** The project name: the picked manifest's, else the repository directory's. */
  project: string;
  hasManifest: boolean;
  /** Authors of up to the 1,000 most recent commits, one entry per commit. */
  commits: readonly GitCommitAuthor[];
}

export interface GitDiscovery {
  people: EntityProposal[];
  projects: EntityProposal[];
}

class UnionFind {
  private readonly parent = new Map<string, string>();
  find(x: string): string {
    let root = x;
    while (this.parent.has(root) && this.parent.get(root) !== root) root = this.parent.get(root)!;
    this.parent.set(x, root);
    return root;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(ra, rb);
  }
}

/**
 * docs/palace-behaviour.md §7.1 signal 2: people from git authors (bots dropped, identities sharing a name or e-mail
 * merged, shown by their most frequent real-looking name) and projects with their confidence.
 */
export function discoverFromGit(repos: readonly RepositoryHistory[], user: { name?: string | undefined; email?: string | undefined } = {}): GitDiscovery {
  const uf = new UnionFind();
  const nameKey = (n: string) => `n:${n.trim().toLowerCase()}`;
  const emailKey = (e: string) => `e:${e.trim().toLowerCase()}`;
  for (const repo of repos) {
    for (const c of repo.commits) {
      if (isBotAuthor(c.name, c.email)) continue;
      uf.union(nameKey(c.name), c.email.trim() === '' ? nameKey(c.name) : emailKey(c.email));
    }
  }
  interface Person {
    commits: number;
    repos: Set<string>;
    variants: Map<string, number>;
  }
  const persons = new Map<string, Person>();
  const perRepoCounts = new Map<string, Map<string, number>>();
  for (const repo of repos) {
    const counts = new Map<string, number>();
    for (const c of repo.commits) {
      if (isBotAuthor(c.name, c.email)) continue;
      const id = uf.find(nameKey(c.name));
      const p = persons.get(id) ?? { commits: 0, repos: new Set<string>(), variants: new Map<string, number>() };
      p.commits++;
      p.repos.add(repo.project);
      p.variants.set(c.name.trim(), (p.variants.get(c.name.trim()) ?? 0) + 1);
      persons.set(id, p);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    perRepoCounts.set(repo.project, counts);
  }
  const people: EntityProposal[] = [];
  for (const p of persons.values()) {
    const display = [...p.variants.entries()].filter(([v]) => looksLikeRealName(v)).sort((a, b) => b[1] - a[1] || compareCodePoints(a[0], b[0]))[0]?.[0];
    if (display === undefined) continue;
    const confidence = p.commits >= 100 || p.repos.size >= 3 ? 0.99 : p.commits >= 20 ? 0.85 : 0.65;
    people.push({ name: display, kind: 'person', confidence, source: 'git', evidence: p.commits });
  }
  const userIds = new Set<string>();
  if (user.name?.trim()) userIds.add(uf.find(nameKey(user.name)));
  if (user.email?.trim()) userIds.add(uf.find(emailKey(user.email)));
  const projects = repos.map((repo): EntityProposal => {
    const counts = perRepoCounts.get(repo.project) ?? new Map<string, number>();
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    const mine = [...userIds].some((id) => {
      const n = counts.get(id) ?? 0;
      if (n === 0) return false;
      return ranked.slice(0, 5).some(([rid]) => rid === id) || n / total >= 0.1 || n >= 20;
    });
    const confidence = mine ? 0.99 : total > 0 ? 0.7 : 0.85;
    return { name: repo.project, kind: 'project', confidence, source: repo.hasManifest || total === 0 ? 'manifest' : 'git', evidence: total };
  });
  const byStrength = (a: EntityProposal, b: EntityProposal) => b.confidence - a.confidence || b.evidence - a.evidence || compareCodePoints(a.name, b.name);
  return { people: people.sort(byStrength).slice(0, 15), projects: projects.sort(byStrength).slice(0, 15) };
}

/** docs/palace-behaviour.md §7.1 signal 3: a Claude Code project folder's name, from a session's `cwd` or the folder name. */
export function projectNameFromClaudeFolder(folderName: string, newestSessionCwd?: string): string {
  const fromCwd = newestSessionCwd?.split(/[\\/]/).filter((p) => p !== '').pop();
  if (fromCwd) return fromCwd;
  return folderName.split('-').filter((p) => p !== '').pop() ?? folderName;
}

export interface ProseScore {
  name: string;
  frequency: number;
  personScore: number;
  projectScore: number;
  pronounHits: number;
  personCategories: number;
}

function countMatches(text: string, re: RegExp): number {
  return [...text.matchAll(re)].length;
}

/** docs/palace-behaviour.md §7.1 signal 4 scoring of one candidate over the prose windows. */
export function scoreProseCandidate(name: string, text: string, frequency: number, locale: EntityLocale = ENTITY_LOCALES.en!): ProseScore {
  const W = locale.wordClass;
  const b = `(?<!${W})`;
  const e = `(?!${W})`;
  const n = escapeRegex(name).replace(/\s+/g, String.raw`\s+`);
  const alt = (words: readonly string[]) => words.map(escapeRegex).join('|');
  const re = (src: string, flags = 'gu') => new RegExp(src, flags);

  const quoted = countMatches(text, re(`^>\\s*${n}:`, 'gmu')) + countMatches(text, re(`\\[${n}\\]`)) + countMatches(text, re(`"${n}\\s+said${e}`));
  const bare = countMatches(text, re(`^${n}: `, 'gmu'));
  const dialogue = 3 * (quoted + (bare >= 2 ? bare : 0));
  const verbs = 2 *
    (countMatches(text, re(`${b}${n}\\s+(?:${alt(locale.personVerbs)})${e}`)) +
      countMatches(text, re(`${b}(?:${alt(locale.greetingWords)})\\s+${n}${e}`, 'giu')));
  const address = 4 * countMatches(text, re(`${b}(?:${alt(locale.addressWords)})\\s+${n}${e}`, 'giu'));
  const lines = text.split('\n');
  const mention = re(`${b}${n}${e}`, 'u');
  const pronoun = re(`${b}(?:${alt(locale.pronouns)})${e}`, 'iu');
  let pronounHits = 0;
  lines.forEach((line, i) => {
    if (!mention.test(line)) return;
    if (lines.slice(Math.max(0, i - 2), i + 3).some((l) => pronoun.test(l))) pronounHits++;
  });
  const pronouns = 2 * pronounHits;
  const projectVerbs = countMatches(text, re(`${b}(?:${alt(locale.projectVerbs)})\\s+${n}${e}`, 'giu'))
    + countMatches(text, re(`${b}the\\s+${n}\\s+(?:${alt(locale.projectNouns)})${e}`, 'giu'))
    + countMatches(text, re(`${b}${n}\\s+v\\d`))
    + countMatches(text, re(`${b}${n}\\.py${e}`))
    + countMatches(text, re(`${b}${n}-(?:core|local)${e}`))
    + countMatches(text, re(`${b}import\\s+${n}${e}`))
    + countMatches(text, re(`${b}pip\\s+install\\s+${n}${e}`));
  const versioned = countMatches(text, re(`${b}${n}-v\\d+(?:\\.\\d+)*`));
  const codeFile = countMatches(text, re(`${b}${n}\\.(?:py|js|ts|yaml|yml|json|sh)${e}`));
  return {
    name,
    frequency,
    personScore: dialogue + verbs + address + pronouns,
    projectScore: 2 * projectVerbs + 3 * versioned + 3 * codeFile,
    pronounHits,
    personCategories: [dialogue, verbs, pronouns, address].filter((s) => s > 0).length,
  };
}

/** docs/palace-behaviour.md §7.1 classification of a scored candidate. */
export function classifyProse(s: ProseScore): { kind: EntityKind; confidence: number } {
  const total = s.personScore + s.projectScore;
  if (total === 0) return { kind: 'uncertain', confidence: Math.min(0.4, s.frequency / 50) };
  const ratio = s.personScore / total;
  if (ratio >= 0.7) {
    const strong = (s.personCategories >= 2 && s.personScore >= 5) || (s.pronounHits >= 5 && s.pronounHits / s.frequency >= 0.2);
    return strong ? { kind: 'person', confidence: Math.min(0.99, 0.5 + ratio / 2) } : { kind: 'uncertain', confidence: 0.4 };
  }
  if (ratio <= 0.3) return { kind: 'project', confidence: 0.5 + (1 - ratio) / 2 };
  return { kind: 'uncertain', confidence: 0.5 };
}

/**
 * docs/palace-behaviour.md §7.1 signal 4 over prose windows (callers pass the first 5,000 characters of up to 10 prose
 * files): candidates seen at least 3 times, scored and classified; 15 people, 10 projects,
 * 8 uncertain, strongest first.
 */
export function discoverFromProse(windows: readonly string[], languages: readonly string[] = ['en']): EntityProposal[] {
  const locales = entityLocales(languages);
  const freq = new Map<string, number>();
  const texts: string[] = [];
  for (const raw of windows) {
    const window = codePointPrefix(raw, 5000);
    texts.push(window);
    const { window: rest, counts } = knownSystemsPrepass(window);
    for (const [name, c] of counts) freq.set(name, (freq.get(name) ?? 0) + c);
    for (const w of candidateWords(rest, locales, 2)) freq.set(w, (freq.get(w) ?? 0) + 1);
    for (const locale of locales) {
      for (const m of rest.matchAll(new RegExp(locale.phrasePattern, 'gu'))) {
        const words = m[0].split(/\s+/);
        if (words.some((w) => locale.stopWords.has(w))) continue;
        const phrase = m[0].replace(/\s+/g, ' ');
        freq.set(phrase, (freq.get(phrase) ?? 0) + 1);
      }
    }
  }
  const text = texts.join('\n');
  const caps: Record<EntityKind, number> = { person: 15, project: 10, uncertain: 8 };
  const out: EntityProposal[] = [];
  const scored = [...freq.entries()]
    .filter(([, c]) => c >= 3)
    .map(([name, c]) => {
      const s = scoreProseCandidate(name, text, c, locales[0]);
      return { ...classifyProse(s), name, evidence: c };
    })
    .sort((a, b) => b.confidence - a.confidence || b.evidence - a.evidence || compareCodePoints(a.name, b.name));
  const taken: Record<EntityKind, number> = { person: 0, project: 0, uncertain: 0 };
  for (const p of scored) {
    if (taken[p.kind] >= caps[p.kind]) continue;
    taken[p.kind]++;
    out.push({ name: p.name, kind: p.kind, confidence: p.confidence, source: 'prose', evidence: p.evidence });
  }
  return out;
}

/**
 * Merge proposals from sources listed strongest first: the first spelling of a name
 * (case-insensitive) wins; uncertain prose candidates are dropped when manifests or git gave
 * real signal (no LLM refinement here).
 */
export function mergeProposals(sources: readonly (readonly EntityProposal[])[]): EntityProposal[] {
  const all = sources.flat();
  const realSignal = all.some((p) => p.source === 'manifest' || p.source === 'git');
  const seen = new Set<string>();
  const out: EntityProposal[] = [];
  for (const p of all) {
    if (realSignal && p.source === 'prose' && p.kind === 'uncertain') continue;
    const key = p.name.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(p);
  }
  return out;
}
