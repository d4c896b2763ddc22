/**
 * `npm run build` (postbuild): writes schema/governance.schema.json from the zod schema (shipped in the package;
 * `init` copies it next to the YAML) and schema/governance-policy.schema.json (the organisation's and the user's file). `--docs` (`npm run docs:config`) also regenerates the config reference in
 * docs/user-guide.md; a test fails when that reference drifts from the schema.
 */
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildPolicySchema, buildSchema, withReference } from "./config-schema.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const schemaFile = path.join(root, "schema", "governance.schema.json");
mkdirSync(path.dirname(schemaFile), { recursive: true });
writeFileSync(schemaFile, `${JSON.stringify(buildSchema(), null, 2)}\n`);
console.log(`${path.relative(root, schemaFile)}: JSON Schema of governance.yaml`);
const policyFile = path.join(root, "schema", "governance-policy.schema.json");
writeFileSync(policyFile, `${JSON.stringify(buildPolicySchema(), null, 2)}\n`);
console.log(`${path.relative(root, policyFile)}: JSON Schema of the organisation's policy and the user's own file`);

if (process.argv.includes("--docs")) {
  const guide = path.join(root, "docs", "user-guide.md");
  writeFileSync(guide, withReference(readFileSync(guide, "utf8")));
  console.log(`${path.relative(root, guide)}: config reference regenerated`);
}
