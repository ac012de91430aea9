import type { Env as VigilEnv } from "../../src/env";

declare global {
  namespace Cloudflare {
    interface Env extends VigilEnv {}
  }
}
