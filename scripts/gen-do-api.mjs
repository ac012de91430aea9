#!/usr/bin/env node
// Rewrites the "Durable Object methods" tables of docs/api.md from the two facades: every public
// method under its area heading (`// ── Area ──`), the parts it delegates to, and its JSDoc line.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const FACADES = [
  ["AgentDO", "src/objects/agent/agent-do.ts"],
  ["TenantDO", "src/objects/tenant/tenant-do.ts"],
];
const API_DOC = join(ROOT, "docs/api.md");
const START = "### AgentDO (";
const END_MARKER = "<!-- end of Durable Object methods -->";

function table(className, path) {
  const lines = readFileSync(join(ROOT, path), "utf8").split("\n");
  const rows = [];
  let area = null;
  let doc = "";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const heading = /^\s*\/\/ ── (.+?) ─+\s*$/.exec(line);
    if (heading) area = heading[1];
    const jsdoc = /^\s*\/\*\*\s*(.+?)\s*(\*\/)?$/.exec(line);
    if (jsdoc) doc = jsdoc[1].replace(/\*\/$/, "").trim();
    const method = /^  (?:override )?(?:async )?([a-zA-Z][A-Za-z0-9]*)\(/.exec(line);
    if (!method || !area || method[1] === "constructor") continue;
    let body = "";
    for (let j = i; j < lines.length && !/^  }$/.test(lines[j]); j++) body += lines[j];
    const targets = [...new Set([...body.matchAll(/this\.parts\.([A-Za-z]+(?:\.[A-Za-z]+)?)/g)].map((m) => m[1]))];
    rows.push(`| ${area} | \`${method[1]}\` | ${targets.map((t) => `\`${t}\``).join(", ")} | ${doc.replace(/\|/g, "\\|")} |`);
    doc = "";
  }
  return [`### ${className} (\`${path}\`)`, "", "| area | method | delegates to | notes |", "| --- | --- | --- | --- |", ...rows, ""].join("\n");
}

const current = readFileSync(API_DOC, "utf8");
const start = current.indexOf(START);
if (start < 0) throw new Error(`docs/api.md has no "${START}" section`);
const end = current.indexOf(END_MARKER);
const tail = end < 0 ? "" : current.slice(end);
const next = `${current.slice(0, start)}${FACADES.map(([name, path]) => table(name, path)).join("\n")}\n${tail || `${END_MARKER}\n`}`;
writeFileSync(API_DOC, next);
console.log("wrote docs/api.md (Durable Object methods)");
