import { describe, expect, it } from 'vitest';
import { COMMON_WORDS } from '../../core/data/common-words.js';
import { ENGLISH } from '../../core/data/entity-locales.js';
import { addRegistryNames, classifyProse, compileEntityDetector, discoverFromGit, discoverFromProse, isBotAuthor, knownSystemsPrepass, looksLikeRealName,
  mergeProposals, parseRegistry, pickManifest, projectNameFromClaudeFolder, projectNameFromManifest, registryNames, scoreProseCandidate,
  setWingTopics } from '../../core/entities.js';
import type { EntityDetectorOptions } from '../../core/entities.js';

/** One-off detection (docs/palace-behaviour.md §4.8), as a mine compiles it once and runs it per drawer. */
const detectEntities = (text: string, options: EntityDetectorOptions = {}) => compileEntityDetector(options)(text);

describe('per-drawer entities (docs/palace-behaviour.md §4.8)', () => {
  it('keeps capitalised words seen at least twice, longer than two letters', () => {
    const text = 'Priya reviewed the patch. Later Priya merged it. Bob said hi. Bob left. Al and Al.';
    expect(detectEntities(text)).toEqual(['Bob', 'Priya']);
  });

  it('drops the capitalised stop-list, weekdays, months and common words', () => {
    const text = 'The plan. The plan. Monday, Monday. March March. Code Code. Phase. Line Line. Zephyr Zephyr.';
    expect(COMMON_WORDS.has('code')).toBe(true);
    expect(detectEntities(text)).toEqual(['Zephyr']);
  });

  it('counts CamelCase names whole', () => {
    expect(detectEntities('MemPalace stores drawers. MemPalace is local. Palace alone.')).toEqual(['MemPalace']);
  });

  it('reads a long run of capitals in a bundle at once, and matches CamelCase as the plain form would', () => {
    // 3,000 capitals after a `+` (base64 in a minified bundle): the plain form
    // `[A-Z][a-z]+(?:[A-Z][a-z]+|[A-Z]{2,})+` backtracks through every split of the run.
    const bundle = `const font = "d09G+Ab${'A'.repeat(3000)}0/x"; OpenAI runs; OpenAI again.`;
    expect(detectEntities(bundle)).toEqual(['OpenAI']);
    const camel = new RegExp(ENGLISH.candidatePatterns[0]!, 'gu');
    const plain = new RegExp(String.raw`(?<![\p{L}\p{N}_])[A-Z][a-z]+(?:[A-Z][a-z]+|[A-Z]{2,})+(?![\p{L}\p{N}_])`, 'gu');
    const found = (re: RegExp, s: string) => [...s.matchAll(re)].map((m) => `${m.index}:${m[0]}`);
    const strings = [''];
    for (let length = 1; length <= 7; length++) {
      for (const s of strings.filter((x) => x.length === length - 1)) for (const c of ['A', 'B', 'a', 'b', '1', ' ']) strings.push(s + c);
    }
    expect(strings.length).toBe(335_923);
    expect(strings.filter((s) => found(camel, s).join() !== found(plain, s).join())).toEqual([]);
  });

  it('counts known multi-word systems under their canonical spelling and blanks them', () => {
    const { window, counts } = knownSystemsPrepass('I use claude code daily; Claude Code and VISUAL STUDIO CODE.');
    expect(counts.get('Claude Code')).toBe(2);
    expect(counts.get('Visual Studio Code')).toBe(1);
    expect(counts.has('Visual Studio')).toBe(false);
    expect(window).not.toMatch(/claude|studio/i);
    expect(window).toHaveLength('I use claude code daily; Claude Code and VISUAL STUDIO CODE.'.length);
    expect(detectEntities('Claude Code wrote it. Claude Code tested it.')).toEqual(['Claude Code']);
  });

  it('finds registry names anywhere, case-insensitively and whole-word, in registry spelling', () => {
    const detect = compileEntityDetector({ knownNames: ['Kai', 'Project Orion', 'c++'] });
    const far = `${'x '.repeat(4000)}and kai again`;
    expect(detect(far)).toEqual(['Kai']);
    expect(detect('kaiser and skai')).toEqual([]);
    expect(detect('we shipped project   orion with C++')).toEqual(['Project Orion', 'c++']);
  });

  it('only looks at the first 5,000 code points for candidates', () => {
    expect(detectEntities(`${'😀'.repeat(5000)} Zephyr Zephyr`)).toEqual([]);
  });

  it('sorts by code point and caps the list at 25 names without cutting one', () => {
    const names = Array.from({ length: 30 }, (_, i) => `Zq${String.fromCharCode(97 + (i % 26))}${'x'.repeat(Math.floor(i / 26) + 1)}`);
    const got = detectEntities(names.map((n) => `${n} ${n}.`).join(' '));
    expect(got).toHaveLength(25);
    expect(got).toEqual([...names].sort().slice(0, 25));
  });

  it('rejects unknown languages', () => {
    expect(() => detectEntities('x', { languages: ['xx'] })).toThrow(/unknown entity language/);
  });
});

describe('registry (docs/palace-behaviour.md §7.2)', () => {
  const reg = parseRegistry({ people: ['Alice', 'Bob'], projects: { Orion: 'ORN', Vega: null }, topics_by_wing: { w1: ['Rust', 'Search'] } });

  it('lists names of all categories and all topics, not the wing keys', () => {
    expect(registryNames(reg)).toEqual(['Alice', 'Bob', 'Orion', 'Vega', 'Rust', 'Search']);
  });

  it('adds names case-insensitively, keeping order and spelling; map categories get null', () => {
    const next = addRegistryNames(addRegistryNames(reg, 'people', ['alice', 'Carol', ' carol ']), 'projects', ['ORION', 'Lyra']);
    expect(next.people).toEqual(['Alice', 'Bob', 'Carol']);
    expect(next.projects).toEqual({ Orion: 'ORN', Vega: null, Lyra: null });
    expect(addRegistryNames(reg, 'places', ['Oslo']).places).toEqual(['Oslo']);
    expect(reg.people).toEqual(['Alice', 'Bob']);
  });

  it('replaces a wing topic list; an empty list removes the wing', () => {
    expect(setWingTopics(reg, 'w1', ['Go', 'go', 'Docs']).topics_by_wing).toEqual({ w1: ['Go', 'Docs'] });
    expect(setWingTopics(reg, 'w1', []).topics_by_wing).toEqual({});
  });

  it('rejects malformed files naming the key', () => {
    expect(() => parseRegistry([])).toThrow(/JSON object/);
    expect(() => parseRegistry({ people: [1] })).toThrow(/people must be a list of names/);
    expect(() => parseRegistry({ topics_by_wing: { w: 'x' } })).toThrow(/topics_by_wing \.w must be a list/);
  });
});

describe('discovery at init (docs/palace-behaviour.md §7.1)', () => {
  it('reads project names from manifests and picks the shallowest', () => {
    expect(projectNameFromManifest('pyproject.toml', '[project]\nname = "alpha"\n')).toBe('alpha');
    expect(projectNameFromManifest('pyproject.toml', '[tool.poetry]\nname = "beta"\n')).toBe('beta');
    expect(projectNameFromManifest('package.json', '{"name": "@scope/gamma"}')).toBe('@scope/gamma');
    expect(projectNameFromManifest('Cargo.toml', '[package]\nname = "delta"\n')).toBe('delta');
    expect(projectNameFromManifest('go.mod', 'module github.com/acme/epsilon\n\ngo 1.22\n')).toBe('epsilon');
    expect(projectNameFromManifest('package.json', '{broken')).toBeUndefined();
    expect(pickManifest([
      { relativePath: 'sub/package.json', file: 'package.json', name: 'deep' },
      { relativePath: 'package.json', file: 'package.json', name: 'js' },
      { relativePath: 'pyproject.toml', file: 'pyproject.toml', name: 'py' },
    ])?.name).toBe('py');
  });

  it('recognises bots', () => {
    for (const [n, e] of [['dependabot[bot]', 'x@y'], ['renovate', 'r@y'], ['release-bot', 'a@b'], ['The Bot', 'a@b'], ['chromium-autoroll', 'a@b'], ['Jane',
      'ci-bot@x.org']]) {
      expect(isBotAuthor(n!, e!)).toBe(true);
    }
    expect(isBotAuthor('Abbott Smith', 'abbott@x.org')).toBe(false);
  });

  it('merges git identities by name or e-mail and scores people and projects', () => {
    const commits = [
      ...Array.from({ length: 15 }, () => ({ name: 'Ada Lovelace', email: 'ada@x.org' })),
      ...Array.from({ length: 10 }, () => ({ name: 'ada', email: 'ada@x.org' })),
      ...Array.from({ length: 3 }, () => ({ name: 'jdoe', email: 'j@x.org' })),
      ...Array.from({ length: 5 }, () => ({ name: 'dependabot[bot]', email: 'bot@x' })),
    ];
    const got = discoverFromGit([
      { project: 'engine', hasManifest: true, commits },
      { project: 'docs-only', hasManifest: true, commits: [] },
    ], { email: 'ada@x.org' });
    expect(got.people).toEqual([{ name: 'Ada Lovelace', kind: 'person', confidence: 0.85, source: 'git', evidence: 25 }]);
    expect(got.projects.map((p) => [p.name, p.confidence])).toEqual([['engine', 0.99], ['docs-only', 0.85]]);
    const notMine = discoverFromGit([{ project: 'engine', hasManifest: false, commits }], { name: 'Someone Else' });
    expect(notMine.projects[0]!.confidence).toBe(0.7);
    expect(looksLikeRealName('ada lovelace')).toBe(false);
  });

  it('names Claude Code project folders from the session cwd or the folder', () => {
    expect(projectNameFromClaudeFolder('-home-me-src-orion', '/home/me/src/orion-app')).toBe('orion-app');
    expect(projectNameFromClaudeFolder('-home-me-src-orion')).toBe('orion');
  });

  it('scores person and project signals in prose', () => {
    const story = [
      'Mira said the tests were green.',
      'She asked for a review.',
      'Hey Mira, thanks!',
      'Mira wrote the summary.',
      '> Mira: ship it',
    ].join('\n');
    const mira = scoreProseCandidate('Mira', story, 5);
    expect(mira.personScore).toBeGreaterThan(0);
    expect(mira.projectScore).toBe(0);
    expect(classifyProse(mira)).toEqual({ kind: 'person', confidence: 0.99 });

    const tool = 'We shipped Lumen last week. The Lumen pipeline runs Lumen.py and Lumen-v1.2 is out. import Lumen';
    const lumen = scoreProseCandidate('Lumen', tool, 5);
    expect(lumen.personScore).toBe(0);
    expect(lumen.projectScore).toBe(2 * 4 + 3 + 3);
    expect(classifyProse(lumen)).toEqual({ kind: 'project', confidence: 1 });
    expect(classifyProse({ name: 'X', frequency: 10, personScore: 0, projectScore: 0, pronounHits: 0, personCategories: 0 })).toEqual({ kind: 'uncertain',
      confidence: 0.2 });
    expect(classifyProse({ name: 'X', frequency: 10, personScore: 4, projectScore: 4, pronounHits: 0, personCategories: 1 })).toEqual({ kind: 'uncertain',
      confidence: 0.5 });
  });

  it('discovers people and projects from prose windows, needing three sightings', () => {
    const doc = [
      'Mira said we should start. She was right.',
      'Mira asked about Lumen.',
      'Hey Mira, look.',
      'We shipped Lumen. The Lumen pipeline is fast. Lumen-v2 next.',
      'Rare Rare',
    ].join('\n');
    const got = discoverFromProse([doc]);
    expect(got.find((p) => p.name === 'Mira')).toMatchObject({ kind: 'person', source: 'prose' });
    expect(got.find((p) => p.name === 'Lumen')).toMatchObject({ kind: 'project' });
    expect(got.find((p) => p.name === 'Rare')).toBeUndefined();
  });

  it('merges sources strongest first and drops uncertain prose when real signal exists', () => {
    const merged = mergeProposals([
      [{ name: 'Orion', kind: 'project', confidence: 0.85, source: 'manifest', evidence: 0 }],
      [{ name: 'orion', kind: 'person', confidence: 0.9, source: 'prose', evidence: 4 }, { name: 'Fog', kind: 'uncertain', confidence: 0.4, source: 'prose',
        evidence: 3 }, { name: 'Mira', kind: 'person', confidence: 0.9, source: 'prose', evidence: 4 }],
    ]);
    expect(merged.map((p) => p.name)).toEqual(['Orion', 'Mira']);
    expect(mergeProposals([[{ name: 'Fog', kind: 'uncertain', confidence: 0.4, source: 'prose', evidence: 3 }]])).toHaveLength(1);
  });
});
