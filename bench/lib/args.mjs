// The command lines of the bench scripts: `--name value` options and `--flag`s, and the repository they run in.
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

export const repoDir = dirname(dirname(dirname(fileURLToPath(import.meta.url))));
export const argv = process.argv.slice(2);

/** The value after `name`, or `fallback` when it is not given. */
export function option(name, fallback = undefined) {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : fallback;
}
