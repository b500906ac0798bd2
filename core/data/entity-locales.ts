/**
 * Per-language entity patterns (docs/palace-behaviour.md §7.1 "Languages"): the candidate word patterns,
 * the multi-word phrase pattern, the capitalised stop-list and the signal words of prose
 * detection. The union over the configured languages applies. Patterns are regex sources used
 * with the `u` flag; `NAME` in a signal pattern stands for the escaped candidate.
 */
export interface EntityLocale {
  /** Single-word candidates (each source is matched globally). */
  candidatePatterns: readonly string[];
  /** Multi-word capitalised phrases (prose detection at init). */
  phrasePattern: string;
  /** Capitalised words never taken as entities (exact case). */
  stopWords: ReadonlySet<string>;
  personVerbs: readonly string[];
  /** Words that, before a name, address the person (`hey Name`). */
  addressWords: readonly string[];
  /** Greeting-like words counted as person verbs before a name (`dear Name`). */
  greetingWords: readonly string[];
  pronouns: readonly string[];
  /** Verbs before a project name (`shipped NAME`). */
  projectVerbs: readonly string[];
  projectNouns: readonly string[];
  /** Word characters of the script; combining marks keep names whole. */
  wordClass: string;
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export const ENGLISH: EntityLocale = {
  candidatePatterns: [
    // CamelCase (MemPalace, GitHub, OpenAI) or a capitalised word of 2–20 letters. The CamelCase
    // parts are written so that a run of capitals splits into them one way only: with
    // `(?:[A-Z][a-z]+|[A-Z]{2,})+` a long run not followed by a word end (base64 in a bundle)
    // backtracked through every split, exponential in its length (32 capitals: 0.5 s).
    String.raw`(?<![\p{L}\p{N}_])[A-Z][a-z]+(?:(?:[A-Z]|[A-Z]{3,})[a-z]+)*(?:(?:[A-Z]|[A-Z]{3,})[a-z]+|[A-Z]{2,})(?![\p{L}\p{N}_])`,
    String.raw`(?<![\p{L}\p{N}_])[A-Z][a-z]{1,19}(?![\p{L}\p{N}_])`,
  ],
  phrasePattern: String.raw`(?<![\p{L}\p{N}_])[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+)+(?![\p{L}\p{N}_])`,
  stopWords: new Set([
    'The', 'This', 'That', 'These', 'Those', 'When', 'Where', 'What', 'Why', 'Who', 'Which', 'How', 'After',
    'Before', 'Then', 'Now', 'Here', 'There', 'And', 'But', 'Or', 'Yet', 'So', 'If', 'Else', 'Yes', 'No',
    'Maybe', 'Okay', 'User', 'Assistant', 'System', 'Tool', ...WEEKDAYS, ...MONTHS,
  ]),
  personVerbs: ['said', 'asked', 'told', 'replied', 'laughed', 'smiled', 'cried', 'felt', 'think', 'thinks', 'want', 'wants', 'love', 'loves', 'hate', 'hates', 'know', 'knows', 'decided', 'pushed', 'wrote'],
  addressWords: ['hey', 'thanks', 'hi'],
  greetingWords: ['hey', 'thanks', 'hi', 'dear'],
  pronouns: ['he', 'she', 'him', 'her', 'his', 'hers', 'himself', 'herself'],
  projectVerbs: ['building', 'built', 'ship', 'shipped', 'shipping', 'launch', 'launched', 'launching', 'deploy', 'deployed', 'deploying', 'install', 'installed', 'installing'],
  /** `the NAME <noun>`. */
  projectNouns: ['architecture', 'pipeline', 'system', 'repo'],
  wordClass: String.raw`[\p{L}\p{N}_]`,
};

export const ENTITY_LOCALES: Readonly<Record<string, EntityLocale>> = { en: ENGLISH };
