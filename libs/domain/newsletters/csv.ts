/** One parsed CSV record with its 1-based line number in the file. */
export type CsvRow = { line: number; fields: string[] };

/**
 * Parses CSV as RFC 4180 writes it (https://www.rfc-editor.org/rfc/rfc4180#section-2): comma
 * separated, double-quoted fields may hold commas, line breaks and doubled quotes; CRLF or LF line
 * ends; a BOM is dropped. One pass, linear in the input. Throws CsvError on an unterminated quote or
 * text after a closing quote.
 */
export function parseCsv(text: string): CsvRow[] {
  const rows: CsvRow[] = [];
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  let fields: string[] = [];
  let rowLine = 1;
  const n = text.length;
  while (i <= n) {
    // One field.
    let value = "";
    if (text[i] === '"') {
      const startLine = line;
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        if (q < 0) throw new CsvError(startLine, "a quoted field is not closed");
        const chunk = text.slice(i, q);
        for (const c of chunk) if (c === "\n") line++;
        value += chunk;
        if (text[q + 1] === '"') {
          value += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      if (i < n && text[i] !== "," && text[i] !== "\n" && text[i] !== "\r")
        throw new CsvError(line, "text after a closing quote");
    } else {
      let j = i;
      while (j < n && text[j] !== "," && text[j] !== "\n" && text[j] !== "\r") j++;
      value = text.slice(i, j);
      i = j;
    }
    fields.push(value);
    if (i < n && text[i] === ",") {
      i++;
      continue;
    }
    // End of record (line break or end of input).
    if (!(fields.length === 1 && fields[0] === "")) rows.push({ line: rowLine, fields });
    fields = [];
    if (text[i] === "\r") i++;
    if (text[i] === "\n") i++;
    line++;
    rowLine = line;
    if (i >= n) break;
  }
  return rows;
}

/** A CSV that cannot be read: the line and why. */
export class CsvError extends Error {
  constructor(
    readonly line: number,
    readonly reason: string,
  ) {
    super(`line ${line}: ${reason}`);
    this.name = "CsvError";
  }
}
