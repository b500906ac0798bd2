// The code was written to a 160-column budget with single quotes, semicolons and trailing commas on
// every multi-line list; prettier's defaults already match the rest, so only these two are set.
export default {
  printWidth: 160,
  singleQuote: true,
};
