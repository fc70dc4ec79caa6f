import { escapeHtml } from "@site/domain/core";
import { mediaPath } from "./grants.ts";
import type { AddedMediaFile } from "./models.ts";

/** `width / height` in lowest terms (`1440×900` is `8 / 5`, a 16:10 screenshot frame). */
function ratio(width: number, height: number): string {
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const d = gcd(width, height);
  return `${width / d} / ${height / d}`;
}

/**
 * The nested Column > Column > Media shape the visual editor recognizes as an image block. Its
 * aspectRatio is the image's own when its size is known (a screenshot frame is 16:10), else left out
 * so the image keeps its shape: never a fixed 16 / 9 that would crop it.
 */
export function mediaEmbedSnippet(
  publicUrl: string,
  alt: string,
  size?: { width?: number | null; height?: number | null },
): string {
  const shape =
    size?.width && size.height && size.width > 0 && size.height > 0
      ? ` aspectRatio="${ratio(size.width, size.height)}"`
      : "";
  return [
    '<Column fillWidth paddingTop="l" paddingBottom="l">',
    "  <Column fillWidth>",
    `    <Media data-visual-block="image" src="${escapeHtml(publicUrl)}" alt="${escapeHtml(alt)}"${shape} radius="m" />`,
    "  </Column>",
    "</Column>",
  ].join("\n");
}

/** The `AddedMediaFile` answer of a library file (storage key, name, size) and its alternative text. */
export function addedMediaFile(
  file: { key: string; name: string; size: number },
  alt: string | null | undefined,
): AddedMediaFile {
  const url = mediaPath(file.key);
  return {
    publicUrl: url,
    path: file.key,
    name: file.name,
    url,
    size: file.size,
    embed: mediaEmbedSnippet(url, alt ?? ""),
  };
}
