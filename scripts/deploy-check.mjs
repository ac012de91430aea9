#!/usr/bin/env node
// `npm run deploy:check` — the preflight before `wrangler deploy` (docs/operations.md).
//
// Which secrets the account holds cannot be read offline (`wrangler secret list` needs the API and
// shows names only), so this checks the values you are about to upload: from the environment, or from
// a dotenv secrets file — the same file `npx wrangler secret bulk <file>` takes — given as
// `--secrets-file <path>` or `VIGIL_SECRETS_FILE=<path>`. The file wins over the environment.
// It refuses (exit 1) when VIGIL_MASTER_KEY or VIGIL_ADMIN_TOKEN is missing or weak, when a seam switch
// (VIGIL_FAULTS, VIGIL_BENCH: any value) or VIGIL_MODE=local would be deployed — from the secrets file, the
// environment or the vars of wrangler.toml (any [env.*] too) — and when wrangler.toml lacks a queue consumer it needs.
// `--config <path>` names another wrangler.toml (as wrangler's own flag does).
// Node builtins only.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDotenv } from "./dotenv.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MIN_MASTER_KEY_LENGTH = 32; // src/core/egress/master-key.ts
const MIN_ADMIN_TOKEN_LENGTH = 24;
const QUEUES = ["vigil-wake", "vigil-wake-dlq", "vigil-outbound", "vigil-outbound-dlq"];

const problems = [];
const values = { ...pick(process.env) };
const file = argValue("--secrets-file") ?? process.env.VIGIL_SECRETS_FILE;
if (file) {
  if (!existsSync(file)) problems.push(`the secrets file ${file} does not exist`);
  else Object.assign(values, pick(parseDotenv(readFileSync(file, "utf8"))));
}

const master = values.VIGIL_MASTER_KEY;
if (!master) problems.push("VIGIL_MASTER_KEY is not set: every sealed secret and token key derives from it (generate one: openssl rand -base64 32)");
else if (master.length < MIN_MASTER_KEY_LENGTH) problems.push(`VIGIL_MASTER_KEY is shorter than ${MIN_MASTER_KEY_LENGTH} characters; the Worker would answer 503 server_misconfigured`);
const admin = values.VIGIL_ADMIN_TOKEN;
if (!admin) problems.push("VIGIL_ADMIN_TOKEN is not set: without it no tenant can be created (generate one: openssl rand -base64 24)");
else if (admin.length < MIN_ADMIN_TOKEN_LENGTH) problems.push(`VIGIL_ADMIN_TOKEN is shorter than ${MIN_ADMIN_TOKEN_LENGTH} characters`);
if (master && admin && master === admin) problems.push("VIGIL_MASTER_KEY and VIGIL_ADMIN_TOKEN must differ");
const toml = readFileSync(argValue("--config") ?? join(ROOT, "wrangler.toml"), "utf8");
const sources = [[file ? "the secrets file or the environment" : "the environment", values], ["wrangler.toml", tomlVars(toml)]];
for (const [where, vars] of sources) {
  if (vars.VIGIL_MODE === "local") problems.push(`VIGIL_MODE=local must not be deployed (${where}): it lets egress reach loopback and private addresses over plain http`);
  if (vars.VIGIL_FAULTS !== undefined) problems.push(`VIGIL_FAULTS=${vars.VIGIL_FAULTS} must not be deployed (${where}): it arms the test seams`);
  if (vars.VIGIL_BENCH !== undefined) problems.push(`VIGIL_BENCH=${vars.VIGIL_BENCH} must not be deployed (${where}): it opens the /__bench routes`);
}
for (const queue of QUEUES) {
  if (!new RegExp(`\\[\\[queues\\.consumers\\]\\]\\s*\\nqueue\\s*=\\s*"${queue}"`).test(toml)) problems.push(`wrangler.toml has no consumer for the queue ${queue}`);
}

if (problems.length > 0) {
  console.error("✘ deploy:check refused:");
  for (const problem of problems) console.error(`  - ${problem}`);
  console.error("See docs/operations.md. Secrets are read from the environment or --secrets-file <dotenv file>.");
  process.exit(1);
}
console.log(`✔ deploy:check passed (secrets from ${file ? file : "the environment"}). Upload them with: npx wrangler secret bulk ${file ?? "<file>"}`);

/**
 * The seam switches and mode wrangler.toml sets anywhere (`[vars]`, `[env.<name>.vars]`, inline tables), comments
 * dropped. A scan for `KEY = "value"` rather than a TOML parser: this script uses Node builtins only, and a false
 * alarm here only stops a deploy.
 */
function tomlVars(text) {
  const out = {};
  const uncommented = text.replace(/(^|[^"'])#.*$/gm, "$1");
  for (const match of uncommented.matchAll(/\b(VIGIL_MODE|VIGIL_FAULTS|VIGIL_BENCH)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s,}]+))/g)) {
    out[match[1]] = match[2] ?? match[3] ?? match[4];
  }
  return out;
}

function pick(source) {
  const out = {};
  for (const key of ["VIGIL_MASTER_KEY", "VIGIL_ADMIN_TOKEN", "VIGIL_MODE", "VIGIL_FAULTS", "VIGIL_BENCH"]) if (typeof source[key] === "string" && source[key] !== "") out[key] = source[key];
  return out;
}

function argValue(name) {
  const args = process.argv.slice(2);
  const at = args.indexOf(name);
  if (at >= 0) return args[at + 1];
  const inline = args.find((arg) => arg.startsWith(`${name}=`));
  return inline ? inline.slice(name.length + 1) : undefined;
}

