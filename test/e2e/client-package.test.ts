import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./harness";
import { sharedServer } from "./shared-server";

/**
 * The typed client as a consumer gets it: packages/client is built and packed (`npm pack`), the tarball installed
 * offline into a scratch ESM project with `moduleResolution: NodeNext` and no DOM lib, type-checked, and run against
 * a live server for a streamed turn.
 */
const PACKAGE = join(REPO_ROOT, "packages", "client");
const TSC = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
const scratch = mkdtempSync(join(tmpdir(), "vigil-client-consumer-"));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const CONSUMER = `import { VigilApiError, VigilClient, type AgentEvent } from "@vigil/client";

const [baseUrl, token] = process.argv.slice(2) as [string, string];
const vigil = new VigilClient({ baseUrl, token });
const agent = await vigil.createAgent({ kind: "coach", displayName: "Packaged", model: "builtin:echo" });
const types: string[] = [];
let text = "";
for await (const event of vigil.streamMessage(agent.id, { text: "from the tarball" }) as AsyncIterable<AgentEvent>) {
  types.push(event.type);
  if (event.type === "text.delta") text += String(event.data.delta);
}
let problem = "";
try {
  await vigil.getAgent("ag_missing");
} catch (error) {
  if (error instanceof VigilApiError) problem = error.code;
}
console.log(JSON.stringify({ text, last: types.at(-1), problem }));
`;

describe("@vigil/client as an installed package", () => {
  it("packs, installs offline, type-checks under NodeNext without the DOM lib, and streams a turn", async () => {
    const server = sharedServer();
    const { apiKey } = await server.tenant("client-package");
    const packDir = join(scratch, "pack");
    mkdirSync(packDir);
    execFileSync("npm", ["pack", "--pack-destination", packDir], { cwd: PACKAGE, stdio: "pipe" });
    const tarball = readdirSync(packDir).find((f) => f.endsWith(".tgz"))!;
    const app = join(scratch, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    execFileSync("npm", ["install", "--offline", "--no-audit", "--no-fund", join(packDir, tarball)], { cwd: app, stdio: "pipe" });
    writeFileSync(join(app, "main.ts"), CONSUMER);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], typeRoots: [join(REPO_ROOT, "node_modules", "@types")], strict: true, noEmit: true, allowImportingTsExtensions: true },
        include: ["main.ts"],
      }),
    );
    execFileSync(process.execPath, [TSC, "-p", "tsconfig.json"], { cwd: app, stdio: "pipe" });
    const out = execFileSync(process.execPath, ["main.ts", server.url, apiKey], { cwd: app, encoding: "utf8" });
    expect(JSON.parse(out.trim().split("\n").at(-1)!)).toEqual({ text: "echo: from the tarball", last: "run.completed", problem: "not_found" });
  }, 180_000);
});
