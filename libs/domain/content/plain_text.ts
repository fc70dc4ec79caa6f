/** Why a string is not plain text (markup or control characters), or null when it is. */
export function plainTextProblem(value: string): string | null {
  // A tag, comment, doctype or processing instruction: `<` followed by a letter, `/`, `!` or `?`.
  if (/<[A-Za-z/!?]/.test(value)) return "plain text only: HTML is not allowed";
  // Character references belong to HTML; the text is escaped wherever it is shown.
  if (/&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});/.test(value))
    return "plain text only: write the character itself, not an HTML character reference";
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value))
    return "control characters are not allowed";
  return null;
}
