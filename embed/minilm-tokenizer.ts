/**
 * BERT WordPiece tokenization for all-MiniLM-L6-v2, matching the Rust `tokenizers` library that
 * sentence-transformers uses. The pipeline (BertNormalizer, BertPreTokenizer, WordPiece, [CLS]/[SEP]
 * template) comes from the model's tokenizer.json through @huggingface/tokenizers, with two
 * additions:
 *
 * - Truncation to `maxTokens` keeping [CLS] first and [SEP] last, as the Rust library does for a
 *   single sequence. The tokenizer.json's own truncation/padding block (128, fixed) is ignored: the
 *   model runs at sentence-transformers' max_seq_length and pads per batch.
 * - CJK ideographs outside the Basic Multilingual Plane (Extensions B–F, compatibility supplement)
 *   are split off as words of their own. @huggingface/tokenizers 0.2.0 walks UTF-16 units when it
 *   spaces CJK characters and so misses these; the Rust library does not. The ranges are the
 *   Rust library's, including its start of the Extension F block at U+2B920 (not U+2B820).
 * - Capital sigma is lowercased to σ beforehand. JS `toLowerCase` applies the Final_Sigma rule
 *   (ς at the end of a word); the Rust library lowercases character by character and never does.
 *
 * Known residual difference, measured over every Unicode code point: about 700 characters added to
 * Unicode in version 9 or later (mostly nonspacing marks, a few punctuation and format characters)
 * are classified by the current Unicode tables of the JS engine, while the Rust library uses older
 * tables. Such a character changes at most the tokens of the word it sits in.
 */
import { Tokenizer } from '@huggingface/tokenizers';

const ASTRAL_CJK_IDEOGRAPH = /[\u{20000}-\u{2A6DF}\u{2A700}-\u{2B73F}\u{2B740}-\u{2B81F}\u{2B920}-\u{2CEAF}\u{2F800}-\u{2FA1F}]/gu;
const CAPITAL_SIGMA = /\u03A3/g;
const SEP_TOKEN = '[SEP]';

export class MiniLmTokenizer {
  private readonly tokenizer: Tokenizer;
  private readonly sepId: number;

  /** `tokenizerJson` is the parsed tokenizer.json of the model. */
  constructor(
    tokenizerJson: object,
    readonly maxTokens: number,
  ) {
    if (!Number.isInteger(maxTokens) || maxTokens < 2) throw new RangeError(`maxTokens must be an integer >= 2, got ${maxTokens}`);
    this.tokenizer = new Tokenizer(tokenizerJson, {});
    const sepId = this.tokenizer.token_to_id(SEP_TOKEN);
    if (sepId === undefined) throw new Error(`tokenizer.json has no ${SEP_TOKEN} token`);
    this.sepId = sepId;
  }

  /** Token ids of one text: [CLS] … [SEP], at most `maxTokens` long. */
  encode(text: string): number[] {
    const ids = this.tokenizer.encode(text.replace(CAPITAL_SIGMA, '\u03C3').replace(ASTRAL_CJK_IDEOGRAPH, ' $& ')).ids;
    if (ids.length <= this.maxTokens) return ids;
    const truncated = ids.slice(0, this.maxTokens - 1);
    truncated.push(this.sepId);
    return truncated;
  }
}
