const HTML_ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * Text made safe to stand in HTML (and in MDX, whose JSX attribute values decode the same references):
 * `& < > " '` become character references, so the result is inert as element text and inside a
 * double- or single-quoted attribute value. The one escaper of the code base (decision 0040).
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}
