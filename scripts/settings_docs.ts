/**
 * Writes `.env.example` and the README's settings tables from the settings table
 * (libs/config/src/settings.ts). `--check` writes nothing and exits 1 when either is out of date;
 * scripts/checks/env_example_test.ts makes the same check in the suite.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envExampleText, readmeWithTables } from "@site/config";

const ROOT = join(import.meta.dir, "..");
const files = [
  { path: join(ROOT, ".env.example"), text: () => envExampleText() },
  {
    path: join(ROOT, "README.md"),
    text: () => readmeWithTables(readFileSync(join(ROOT, "README.md"), "utf8")),
  },
];
const check = process.argv.includes("--check");
let stale = 0;
for (const f of files) {
  const want = f.text();
  if (readFileSync(f.path, "utf8") === want) continue;
  stale++;
  if (check) console.error(`${f.path} differs from the settings table: run bun scripts/settings_docs.ts`);
  else writeFileSync(f.path, want);
}
if (check && stale > 0) process.exit(1);
