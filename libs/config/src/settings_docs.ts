import { SETTINGS, type SettingDecl, type SettingSection } from "./settings.ts";

/**
 * `.env.example` and the README's settings tables, written from the settings table (decision 1520):
 * `bun scripts/settings_docs.ts` writes them, scripts/checks/env_example_test.ts fails when either
 * differs from what the table says.
 */

/** The README tables generated from the table: each between its begin and end markers. */
export const README_TABLES: { id: string; sections: SettingSection[] }[] = [
  {
    id: "configuration",
    sections: [
      "HTTP",
      "State",
      "Production backends",
      "Rendering",
      "Operators",
      "Limits the spec leaves open",
      "Faults, health and load",
      "Social platforms",
      "AI image generation",
      "Development",
      "Test hooks",
    ],
  },
  { id: "newsletters", sections: ["Newsletters"] },
  { id: "webhooks", sections: ["Webhooks"] },
];

/** The markers around a generated README table (kept by hand edits elsewhere in the README). */
export function readmeMarkers(id: string): { begin: string; end: string } {
  return {
    begin: `<!-- settings:${id} begin: generated from libs/config/src/settings.ts by \`bun scripts/settings_docs.ts\`; edit the table there -->`,
    end: `<!-- settings:${id} end -->`,
  };
}

function defaultWords(s: SettingDecl): string {
  if (s.defaultText) return s.defaultText;
  if (s.default === null || s.default === "") return "none";
  if (typeof s.default === "boolean") return s.default ? "on" : "off";
  if (typeof s.default === "number") return String(s.default);
  return `\`${s.default}\``;
}

function notes(s: SettingDecl): string {
  const out: string[] = [];
  if (s.secret) out.push("secret");
  if (s.notInProduction) out.push(`${s.notInProduction.kind}: refused when NODE_ENV=production`);
  return out.length > 0 ? ` (${out.join("; ")})` : "";
}

/** One README table (header and rows) for the given sections; per-platform settings share a row. */
export function readmeTable(sections: SettingSection[]): string {
  const rows = ["| setting | default | read by | meaning |", "|---|---|---|---|"];
  const seen = new Set<string>();
  for (const s of SETTINGS) {
    if (!sections.includes(s.section)) continue;
    const name = s.family ?? s.name;
    if (seen.has(name)) continue;
    seen.add(name);
    rows.push(`| \`${name}\` | ${defaultWords(s)} | ${s.apps.join(", ")} | ${s.doc}${notes(s)} |`);
  }
  return rows.join("\n");
}

/** The README with each generated table replaced by what the settings table says now. */
export function readmeWithTables(readme: string): string {
  let out = readme;
  for (const t of README_TABLES) {
    const { begin, end } = readmeMarkers(t.id);
    const a = out.indexOf(begin);
    const b = out.indexOf(end);
    if (a < 0 || b < a) throw new Error(`README.md lacks the markers of the ${t.id} settings table`);
    out = `${out.slice(0, a + begin.length)}\n${readmeTable(t.sections)}\n${out.slice(b)}`;
  }
  return out;
}

function exampleValue(s: SettingDecl): string {
  // A secret shows at most a placeholder of its shape (user:pass), never a default.
  if (s.example !== undefined) return s.example;
  if (s.secret) return "";
  if (s.default === null) return "";
  if (typeof s.default === "boolean") return s.default ? "1" : "0";
  return String(s.default);
}

/** `text` as `# ` comment lines of at most 110 characters. */
function comment(text: string): string[] {
  const out: string[] = [];
  let line = "#";
  for (const word of text.split(" ")) {
    if (line.length + 1 + word.length > 110 && line !== "#") {
      out.push(line);
      line = "#  ";
    }
    line += ` ${word}`;
  }
  out.push(line);
  return out;
}

/** `.env.example`: every setting, commented out, under its section, with its one line of doc. */
export function envExampleText(): string {
  const lines = [
    "# Site Content API settings. Every one is optional: unset, the embedded defaults run on one machine.",
    "# Generated from libs/config/src/settings.ts by `bun scripts/settings_docs.ts`: edit the table there.",
  ];
  let section: string | null = null;
  let family: string | undefined;
  for (const s of SETTINGS) {
    if (s.section !== section) {
      section = s.section;
      lines.push("", `# --- ${section} ---`);
    }
    // A per-platform family is described once, above its first member.
    if (s.family && s.family === family) {
      lines.push(`# ${s.name}=${exampleValue(s)}`);
      continue;
    }
    family = s.family;
    const doc = s.doc.replaceAll("`", "");
    const deflt =
      s.default === null && !s.defaultText ? "" : ` Default: ${defaultWords(s).replaceAll("`", "")}.`;
    const each = s.family ? `${s.family}: ` : "";
    lines.push(...comment(`${each}${doc}${notes(s)}.${deflt} Read by: ${s.apps.join(", ")}.`));
    lines.push(`# ${s.name}=${exampleValue(s)}`);
  }
  return `${lines.join("\n")}\n`;
}
