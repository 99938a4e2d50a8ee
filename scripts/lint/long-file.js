// The house rule for long files: a source file over LONG_FILE_LINES lines says at its top why it
// is one file (a comment before its first line of code that names the length: "Over 300 lines: …"),
// so a long file is a choice someone explained, not an accident. Split where that reads better.

/** More lines than this want a note at the top. */
export const LONG_FILE_LINES = 300;

const NOTE = new RegExp(`\\bover ${LONG_FILE_LINES} lines\\b`, 'i');

/** @type {import('eslint').Rule.RuleModule} */
export const longFileNote = {
  meta: {
    type: 'suggestion',
    docs: { description: `a file over ${LONG_FILE_LINES} lines says at its top why it is one file` },
    schema: [],
    messages: {
      noNote:
        'This file has {{lines}} lines: split it where that reads better, or say at its top why it is one file ("Over {{max}} lines: …").',
    },
  },
  create(context) {
    return {
      Program(program) {
        const source = context.sourceCode;
        // As `wc -l` counts them: a last line that ends the file with a newline is not one more.
        const lines = source.lines.length - (source.lines.at(-1) === '' ? 1 : 0);
        if (lines <= LONG_FILE_LINES) return;
        const firstCode = source.ast.tokens[0]?.range[0] ?? source.text.length;
        const top = source
          .getAllComments()
          .filter((c) => c.range[1] <= firstCode)
          .map((c) => c.value)
          .join('\n');
        if (!NOTE.test(top))
          context.report({ node: program, loc: { line: 1, column: 0 }, messageId: 'noNote', data: { lines, max: LONG_FILE_LINES } });
      },
    };
  },
};

/** The plugin eslint.config.js registers as `house`. */
export default { rules: { 'long-file-note': longFileNote } };
