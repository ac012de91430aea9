/**
 * Where this Vigil runs, as far as egress is concerned: `local` under `npm start`
 * (scripts/start.mjs passes `VIGIL_MODE=local` to `wrangler dev`; the tests' servers do the same),
 * `deployed` everywhere else. Anything but the exact value `local` — absent, empty, misspelt — is
 * deployed: a forgotten variable can only make egress stricter, never looser.
 */
export type DeploymentMode = "local" | "deployed";

export function deploymentMode(value: string | undefined): DeploymentMode {
  return value === "local" ? "local" : "deployed";
}
