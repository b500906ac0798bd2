/**
 * Inflection folding for the lexical leg: a natural-language question inflects its words
 * ("sorting lists", "removed duplicates", "parses dates") while code names the same things in
 * their base form (`sort(list)`, `remove_duplicates`, `parse_date`). Folding the regular English
 * endings (plural -s/-es/-ies, -ing, -ed) on both sides lets those words meet. It is deliberately
 * light (no derivational suffixes such as -ation or -ness): only forms of one word are merged.
 */

/** A doubled final consonant left by -ing/-ed (`running` → `runn`) loses one; `ll`, `ss`, `zz` stay (`install`, `pass`). */
function undouble(base: string): string {
  return /([b-df-hj-np-tv-z])\1$/.test(base) && !/(ll|ss|zz)$/.test(base) ? base.slice(0, -1) : base;
}

function endingFolded(token: string): string {
  if (token.endsWith('ies') && token.length > 4) return `${token.slice(0, -3)}y`;
  if (token.endsWith('ing') && token.length > 5) return undouble(token.slice(0, -3));
  if (token.endsWith('ed') && token.length > 4) return undouble(token.slice(0, -2));
  if (/(sses|xes|ches|shes)$/.test(token)) return token.slice(0, -2);
  if (token.endsWith('s') && !/(ss|us|is)$/.test(token)) return token.slice(0, -1);
  return token;
}

/**
 * The stem of one lowercase token; tokens of three letters or fewer and tokens with digits stay as
 * they are. A final silent `e` goes from every stem, so `parse`, `parses`, `parsed` and `parsing`
 * all become `pars`.
 */
export function wordStem(token: string): string {
  if (token.length <= 3 || /\p{N}/u.test(token)) return token;
  const stem = endingFolded(token);
  return stem.length > 3 && stem.endsWith('e') ? stem.slice(0, -1) : stem;
}
